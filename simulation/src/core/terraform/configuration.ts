import type { InfraContext } from './infra.js';

export const PROVIDERS = {
  aws: 'registry.terraform.io/hashicorp/aws',
  random: 'registry.terraform.io/hashicorp/random',
  tls: 'registry.terraform.io/hashicorp/tls',
} as const;

const ref = (...references: string[]) => ({ references });
const constant = (constant_value: unknown) => ({ constant_value });

/**
 * The plan's `configuration` block. Provider credentials written as literals appear here as
 * `constant_value` — the place HashiCorp's own sanitiser skips (FIELD-NOTES), so it is always present.
 */
export function configurationOf(c: InfraContext, extraResources: number) {
  const res = (
    type: string,
    name: string,
    provider: keyof typeof PROVIDERS,
    expressions: object,
    more: object = {},
  ) => ({
    address: `${type}.${name}`,
    mode: 'managed',
    type,
    name,
    provider_config_key: provider,
    expressions,
    schema_version: type === 'aws_instance' ? 1 : 0,
    ...more,
  });
  return {
    provider_config: {
      aws: {
        name: 'aws',
        full_name: PROVIDERS.aws,
        version_constraint: '~> 5.60',
        expressions: {
          region: ref('var.region'),
          access_key: constant(c.secrets.awsAccessKey),
          secret_key: constant(c.secrets.awsSecretKey),
        },
      },
      random: { name: 'random', full_name: PROVIDERS.random, version_constraint: '~> 3.6' },
      tls: { name: 'tls', full_name: PROVIDERS.tls, version_constraint: '~> 4.0' },
    },
    root_module: {
      outputs: {
        db_password: { sensitive: true, expression: ref('module.db.password', 'module.db') },
        vpc_id: { expression: ref('module.network.vpc_id', 'module.network') },
        web_instance_ids: { expression: ref('aws_instance.web') },
      },
      resources: [
        res(
          'aws_instance',
          'web',
          'aws',
          {
            ami: constant('ami-0a1b2c3d4e5f67890'),
            instance_type: ref('var.instance_type'),
            user_data: constant(
              `#!/bin/sh\nexport DEPLOY_HOOK_TOKEN=${c.secrets.apiToken}\n/opt/app/start\n`,
            ),
            tags: ref('var.environment'),
          },
          { count_expression: constant(2) },
        ),
        ...(extraResources
          ? [
              res(
                'aws_instance',
                'fleet',
                'aws',
                { instance_type: constant('t3.nano') },
                { count_expression: constant(extraResources) },
              ),
            ]
          : []),
        res('aws_s3_bucket', 'logs', 'aws', { bucket: constant(`${c.component}-${c.environment}-logs`) }),
        res('aws_security_group', 'web', 'aws', {
          name: constant(`${c.component}-web`),
          vpc_id: ref('module.network.vpc_id'),
        }),
        res('random_password', 'db', 'random', { length: constant(24), special: constant(true) }),
        res('tls_private_key', 'deploy', 'tls', { algorithm: constant('ED25519') }),
      ],
      module_calls: {
        db: {
          source: './modules/db',
          expressions: { password: ref('random_password.db.result', 'random_password.db') },
          module: {
            outputs: { password: { sensitive: true, expression: ref('aws_db_instance.main.password') } },
            resources: [
              res('aws_db_instance', 'main', 'aws', {
                engine: constant('postgres'),
                username: constant('driftline'),
                password: ref('var.password'),
              }),
            ],
            variables: { password: { sensitive: true } },
          },
        },
        network: {
          source: './modules/network',
          expressions: { cidr: constant(`10.${c.net}.0.0/16`) },
          module: {
            outputs: { vpc_id: { expression: ref('aws_vpc.main.id', 'aws_vpc.main') } },
            resources: [
              res(
                'aws_subnet',
                'private',
                'aws',
                { vpc_id: ref('aws_vpc.main.id') },
                {
                  for_each_expression: constant({ a: 1, b: 2 }),
                },
              ),
              res('aws_vpc', 'main', 'aws', { cidr_block: ref('var.cidr') }),
            ],
            variables: { cidr: {} },
          },
        },
      },
      variables: {
        api_token: {
          description: 'token for the deploy hook (not marked sensitive, as in many real configs)',
        },
        db_password: { sensitive: true, description: 'initial database password' },
        environment: { default: c.environment },
        instance_type: { default: 't3.small' },
        region: { default: c.region },
      },
    },
  };
}
