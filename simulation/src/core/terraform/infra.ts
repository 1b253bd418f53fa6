import { type Random, seededRandom } from '../rng.js';
import { hex, makeSecrets, type Secrets } from './secrets.js';

export type Provider = 'aws' | 'random' | 'tls';

/** One managed resource instance, as Terraform's state holds it. */
export interface Res {
  module?: string;
  type: string;
  name: string;
  index?: number | string;
  provider: Provider;
  values: Record<string, unknown>;
  /** Top-level attributes the provider marks sensitive. */
  sensitive?: string[];
  /** Attributes the provider computes on create (unknown in the plan). */
  computed?: string[];
}

export function addressOf(r: Pick<Res, 'module' | 'type' | 'name' | 'index'>): string {
  const idx = r.index === undefined ? '' : typeof r.index === 'number' ? `[${r.index}]` : `["${r.index}"]`;
  return `${r.module ? `${r.module}.` : ''}${r.type}.${r.name}${idx}`;
}

export interface InfraContext {
  component: string;
  environment: string;
  seed: number;
  extraResources: number;
  region: string;
  secrets: Secrets;
  net: number;
}

export function infraContext(
  component: string,
  environment: string,
  seed: number,
  extra: number,
): InfraContext {
  const r = seededRandom(`${seed}/${component}/${environment}/secrets`);
  return {
    component,
    environment,
    seed,
    extraResources: extra,
    region: 'eu-north-1',
    secrets: makeSecrets(r),
    net: 10 + Math.floor(r() * 200),
  };
}

/** The component's infrastructure as it stands in state: modules, count and for_each instances. */
export function baseInfra(c: InfraContext): Res[] {
  const r = seededRandom(`${c.seed}/${c.component}/${c.environment}/ids`);
  const tags = (name: string, extra: Record<string, string> = {}) => ({
    Name: name,
    env: c.environment,
    ...extra,
  });
  const arn = (svc: string, id: string) => `arn:aws:${svc}:${c.region}:123456789012:${id}`;
  const vpcId = `vpc-${hex(r, 17)}`;
  const subnet = (key: string, i: number): Res => ({
    module: 'module.network',
    type: 'aws_subnet',
    name: 'private',
    index: key,
    provider: 'aws',
    computed: ['id', 'arn'],
    values: {
      id: `subnet-${hex(r, 17)}`,
      arn: arn('ec2', `subnet/${key}`),
      vpc_id: vpcId,
      cidr_block: `10.${c.net}.${i + 1}.0/24`,
      availability_zone: `${c.region}${key}`,
      tags: tags(`${c.component}-private-${key}`),
    },
  });
  const web = (i: number): Res => ({
    type: 'aws_instance',
    name: 'web',
    index: i,
    provider: 'aws',
    computed: ['id', 'arn', 'private_ip'],
    values: {
      id: `i-${hex(r, 17)}`,
      arn: arn('ec2', `instance/web-${i}`),
      ami: 'ami-0a1b2c3d4e5f67890',
      instance_type: 't3.small',
      private_ip: `10.${c.net}.1.${10 + i}`,
      // Real configurations leak secrets through attributes nobody marked sensitive.
      user_data: `#!/bin/sh\nexport DEPLOY_HOOK_TOKEN=${c.secrets.apiToken}\n/opt/app/start\n`,
      tags: tags(`${c.component}-web-${i}`, { role: 'web', version: '1.4.2' }),
    },
  });
  const res: Res[] = [
    {
      module: 'module.network',
      type: 'aws_vpc',
      name: 'main',
      provider: 'aws',
      computed: ['id', 'arn'],
      values: {
        id: vpcId,
        arn: arn('ec2', `vpc/${vpcId}`),
        cidr_block: `10.${c.net}.0.0/16`,
        enable_dns_hostnames: true,
        tags: tags(`${c.component}-${c.environment}`),
      },
    },
    subnet('a', 0),
    subnet('b', 1),
    {
      type: 'aws_security_group',
      name: 'web',
      provider: 'aws',
      computed: ['id', 'arn'],
      values: {
        id: `sg-${hex(r, 17)}`,
        arn: arn('ec2', 'security-group/web'),
        name: `${c.component}-web`,
        vpc_id: vpcId,
        ingress: [{ cidr_blocks: [`10.${c.net}.0.0/16`], from_port: 443, to_port: 443, protocol: 'tcp' }],
        tags: tags(`${c.component}-web`),
      },
    },
    web(0),
    web(1),
    {
      module: 'module.db',
      type: 'aws_db_instance',
      name: 'main',
      provider: 'aws',
      sensitive: ['password'],
      computed: ['id', 'arn', 'endpoint'],
      values: {
        id: `db-${hex(r, 26).toUpperCase()}`,
        arn: arn('rds', `db:${c.component}`),
        engine: 'postgres',
        engine_version: '16.3',
        instance_class: 'db.t3.micro',
        username: 'driftline',
        password: c.secrets.dbPassword,
        backup_retention_period: 7,
        endpoint: `${c.component}.${hex(r, 12)}.${c.region}.rds.amazonaws.com:5432`,
        tags: tags(`${c.component}-db`),
      },
    },
    {
      type: 'random_password',
      name: 'db',
      provider: 'random',
      sensitive: ['result', 'bcrypt_hash'],
      computed: ['id', 'result', 'bcrypt_hash'],
      values: {
        id: 'none',
        length: 24,
        special: true,
        result: c.secrets.dbPassword,
        bcrypt_hash: `$2a$10$${hex(r, 53)}`,
      },
    },
    {
      type: 'tls_private_key',
      name: 'deploy',
      provider: 'tls',
      sensitive: ['private_key_pem', 'private_key_openssh'],
      computed: ['id', 'private_key_pem', 'private_key_openssh', 'public_key_openssh'],
      values: {
        id: hex(r, 40),
        algorithm: 'ED25519',
        private_key_pem: c.secrets.deployKeyPem,
        private_key_openssh: `-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA${hex(r, 40)}\n-----END OPENSSH PRIVATE KEY-----\n`,
        public_key_openssh: `ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI${hex(r, 40)}\n`,
      },
    },
    {
      type: 'aws_s3_bucket',
      name: 'logs',
      provider: 'aws',
      computed: ['id', 'arn'],
      values: {
        id: `${c.component}-${c.environment}-logs-${hex(r, 8)}`,
        arn: arn('s3', `${c.component}-${c.environment}-logs`),
        bucket: `${c.component}-${c.environment}-logs`,
        force_destroy: false,
        tags: tags(`${c.component}-logs`),
      },
    },
  ];
  for (let i = 0; i < c.extraResources; i++) {
    res.push({
      type: 'aws_instance',
      name: 'fleet',
      index: i,
      provider: 'aws',
      computed: ['id', 'arn'],
      values: {
        id: `i-${hex(r, 17)}`,
        arn: arn('ec2', `instance/fleet-${i}`),
        ami: 'ami-0a1b2c3d4e5f67890',
        instance_type: 't3.nano',
        tags: tags(`fleet-${i}`),
      },
    });
  }
  return res;
}

export type Mutation =
  | { kind: 'update'; address: string; set: Record<string, unknown> }
  | { kind: 'replace'; address: string; set: Record<string, unknown>; paths: string[] }
  | { kind: 'create'; res: Res }
  | { kind: 'delete'; address: string };

/** Proposed changes for the `changes` state: always the sensitive password rotation, plus a variant-picked few. */
export function changeMutations(c: InfraContext, base: Res[], variant: number): Mutation[] {
  const r = seededRandom(`${c.seed}/${c.component}/${c.environment}/changes/${variant}`);
  const web0 = base.find((x) => addressOf(x) === 'aws_instance.web[0]')!;
  const sg = base.find((x) => x.type === 'aws_security_group')!;
  const newWeb: Res = {
    ...web0,
    index: 2,
    values: { ...web0.values, tags: { ...(web0.values.tags as object), Name: `${c.component}-web-2` } },
  };
  const newSubnet = base.find((x) => addressOf(x) === 'module.network.aws_subnet.private["a"]')!;
  const candidates: Mutation[] = [
    {
      kind: 'update',
      address: 'aws_instance.web[0]',
      set: { instance_type: 't3.medium', tags: { ...(web0.values.tags as object), version: '1.5.0' } },
    },
    { kind: 'create', res: newWeb },
    {
      kind: 'replace',
      address: 'module.network.aws_subnet.private["b"]',
      set: { cidr_block: `10.${c.net}.20.0/24` },
      paths: ['cidr_block'],
    },
    { kind: 'delete', address: 'aws_s3_bucket.logs' },
    {
      kind: 'update',
      address: 'aws_security_group.web',
      set: {
        ingress: [
          ...(sg.values.ingress as object[]),
          { cidr_blocks: ['192.168.7.0/24'], from_port: 22, to_port: 22, protocol: 'tcp' },
        ],
      },
    },
    {
      kind: 'create',
      res: {
        ...newSubnet,
        index: 'c',
        values: { ...newSubnet.values, cidr_block: `10.${c.net}.3.0/24`, availability_zone: `${c.region}c` },
      },
    },
  ];
  const order = candidates.map((m) => ({ m, k: r() })).sort((a, b) => a.k - b.k);
  const n = 2 + Math.floor(r() * 3);
  const sensitive: Mutation = {
    kind: 'update',
    address: 'module.db.aws_db_instance.main',
    set: { password: c.secrets.rotatedDbPassword },
  };
  return [sensitive, ...order.slice(0, n).map((o) => o.m)];
}

/**
 * Scenario `extraChanges`: every `aws_instance.fleet[n]` gets four new tags under seeded random keys,
 * so the plan's detail (changed attribute paths by resource) is big and hardly compresses.
 */
export function fleetMutations(c: InfraContext, base: Res[], variant: number): Mutation[] {
  const r = seededRandom(`${c.seed}/${c.component}/${c.environment}/fleet/${variant}`);
  return base
    .filter((x) => x.type === 'aws_instance' && x.name === 'fleet')
    .map((x) => ({
      kind: 'update' as const,
      address: addressOf(x),
      set: {
        tags: {
          ...(x.values.tags as object),
          ...Object.fromEntries(Array.from({ length: 4 }, () => [`k${hex(r, 16)}`, 'v'])),
        },
      },
    }));
}

/** Changes made outside Terraform that the configuration ignores (`ignore_changes`): drift only. */
export function driftMutations(base: Res[], variant: number): Mutation[] {
  const owner = variant === 0 ? 'someone-in-the-console' : `night-shift-${variant}`;
  const sg = base.find((x) => x.type === 'aws_security_group')!;
  return [
    {
      kind: 'update',
      address: 'aws_security_group.web',
      set: { tags: { ...(sg.values.tags as object), owner } },
    },
    {
      kind: 'update',
      address: 'module.db.aws_db_instance.main',
      set: { backup_retention_period: 14 + variant },
    },
  ];
}

export type { Random };
