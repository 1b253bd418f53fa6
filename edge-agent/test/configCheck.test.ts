import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHopServer, type HopServer, MemoryHopBackend } from '@driftline/hop';
import { generateSigningKeyPair, publicKeyToText } from '@driftline/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers/storeFixtures.js';

const bin = fileURLToPath(new URL('../bin/edge-agent.js', import.meta.url));
const check = (config: string, args: string[] = [], PATH = process.env.PATH ?? '') =>
  spawnSync(process.execPath, [bin, 'config', 'check', '--config', config, ...args], {
    encoding: 'utf8',
    env: { ...process.env, PATH, LOG_LEVEL: 'silent' },
  });

/** Like `check`, without blocking this process, which serves the hop API the check tries. */
const checkOnline = (config: string, args: string[], PATH: string) =>
  new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    const p = spawn(process.execPath, [bin, 'config', 'check', '--config', config, '--online', ...args], {
      env: { ...process.env, PATH, LOG_LEVEL: 'silent' },
    });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    p.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    p.on('close', (status) => resolve({ status, stdout, stderr }));
  });

let dir: string;
let tools: string;
let hubKey: string;
let server: HopServer;
let serverUrl: string;

/** An agent.yaml in `dir` with these components and upstreams. */
function config(
  name: string,
  components: string,
  upstreams = '[{ url: "http://127.0.0.1:9", tokenFile: ./token }]',
) {
  const file = join(dir, name);
  writeFileSync(
    file,
    `site: ship-7\nagent: a1\ndataDir: ./data\nhubPublicKeyFile: ./hub.pub\nupstreams: ${upstreams}\ncomponents:\n${components}`,
  );
  return file;
}

beforeAll(async () => {
  dir = tempDir('driftline-check-');
  tools = join(dir, 'tools');
  mkdirSync(tools);
  mkdirSync(join(dir, 'infra'));
  // A terraform that answers `version -json`, and an older-style tofu that answers only `version`.
  writeFileSync(
    join(tools, 'terraform'),
    '#!/bin/sh\n[ "$1 $2" = "version -json" ] && { echo \'{"terraform_version":"1.9.8","platform":"linux_amd64"}\'; exit 0; }\nexit 1\n',
  );
  writeFileSync(
    join(tools, 'tofu'),
    '#!/bin/sh\n[ "$2" = "-json" ] && exit 1\n[ "$1" = version ] && { echo "OpenTofu v1.8.0"; echo "on linux_amd64"; exit 0; }\nexit 1\n',
  );
  chmodSync(join(tools, 'terraform'), 0o755);
  chmodSync(join(tools, 'tofu'), 0o755);
  hubKey = await publicKeyToText((await generateSigningKeyPair()).publicKey);
  writeFileSync(join(dir, 'hub.pub'), `${hubKey}\n`);
  writeFileSync(join(dir, 'token'), 'good-token\n');
  writeFileSync(join(dir, 'wrong.token'), 'someone-elses\n');
  const backend = new MemoryHopBackend({ name: 'relay-1', role: 'relay' });
  backend.addToken('good-token', { name: 'ship-7', sites: ['ship-7'] });
  server = createHopServer(backend, { uploads: { directory: tempDir('driftline-tus-') } });
  serverUrl = (await server.listen(0, '127.0.0.1')).url;
});
afterAll(() => server?.close());

describe('edge-agent config check', { timeout: 60_000 }, () => {
  it('says which terraform and tofu each component finds on PATH and which version answers', () => {
    const file = config(
      'tools.yaml',
      '  - { name: network, workingDir: ./infra, environments: [prod] }\n  - { name: dns, workingDir: ./infra, environments: [prod], tool: tofu }\n',
    );
    const r = check(file, ['--json'], `${tools}:${process.env.PATH}`);
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ ok: true, site: 'ship-7', problems: [] });
    expect(out.tools).toEqual([
      {
        component: 'network',
        key: 'tool',
        program: 'terraform',
        path: join(tools, 'terraform'),
        version: 'Terraform v1.9.8',
      },
      {
        component: 'dns',
        key: 'tool',
        program: 'tofu',
        path: join(tools, 'tofu'),
        version: 'OpenTofu v1.8.0',
      },
    ]);
    expect(out.files).toEqual([
      { key: 'hubPublicKeyFile', file: join(dir, 'hub.pub'), ok: true, detail: hubKey },
      { key: 'upstreams[0].tokenFile', file: join(dir, 'token'), ok: true },
    ]);
    const human = check(file, [], `${tools}:${process.env.PATH}`);
    expect(human.stdout).toContain(`network: terraform at ${join(tools, 'terraform')}, Terraform v1.9.8`);
    expect(human.stdout).not.toContain('good-token');
  });

  it('names, by key path, a tool not on PATH, a command override that is not there, a bad key and an empty token; exit 2', () => {
    writeFileSync(join(dir, 'bad.pub'), 'ed25519:AAAA\n');
    writeFileSync(join(dir, 'empty.token'), '\n');
    const file = join(dir, 'bad.yaml');
    writeFileSync(
      file,
      'site: ship-7\nagent: a1\ndataDir: ./data\nhubPublicKeyFile: ./bad.pub\n' +
        'upstreams: [{ url: "http://127.0.0.1:9", tokenFile: ./empty.token }, { url: "http://127.0.0.1:9", tokenFile: ./missing.token }]\n' +
        'components:\n  - { name: network, workingDir: ./infra, environments: [prod], tool: tofu }\n' +
        '  - { name: dns, workingDir: ./infra, environments: [prod], command: [./plan.sh, "{environment}"] }\n',
    );
    const r = check(file, [], '/nonexistent');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(
      /- hubPublicKeyFile: ".*bad\.pub" is not the hub's public key: not a public key/,
    );
    expect(r.stderr).toMatch(/- upstreams\[0\]\.tokenFile: ".*empty\.token" is empty/);
    expect(r.stderr).toMatch(/- upstreams\[1\]\.tokenFile: cannot read ".*missing\.token": ENOENT/);
    expect(r.stderr).toMatch(/- components\[0\]\.tool: tofu is not on PATH/);
    expect(r.stderr).toMatch(
      /- components\[1\]\.command: "\.\/plan\.sh" is not an executable file \(looked in .*infra\)/,
    );
    expect(r.stdout).toMatch(/network: tofu NOT FOUND/);
  });

  it('lists per component the variables its code declares that are neither sensitive nor public (masked)', () => {
    mkdirSync(join(dir, 'masking'));
    writeFileSync(
      join(dir, 'masking', 'variables.tf'),
      'variable "db_password" {}\nvariable "token" {\n  sensitive = true\n}\nvariable "region" { default = "eu-west-1" }\n',
    );
    writeFileSync(
      join(dir, 'masking', 'more.tf.json'),
      JSON.stringify({ variable: { environment: {}, admin_name: { default: 'x' } } }),
    );
    const file = config(
      'masking.yaml',
      '  - { name: iam, workingDir: ./masking, environments: [prod] }\n' +
        'redaction: { publicVariables: [region, environment] }\n',
    );
    const r = check(file, ['--json'], `${tools}:${process.env.PATH}`);
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).masked).toEqual([
      { component: 'iam', variables: ['admin_name', 'db_password'] },
    ]);
    expect(check(file, [], `${tools}:${process.env.PATH}`).stdout).toContain(
      '  iam: masks the values of var.admin_name, var.db_password (neither sensitive nor in redaction.publicVariables)',
    );
  });

  it('warns, without failing, that no publication kind is accepted', () => {
    const file = config('plain.yaml', '  - { name: network, workingDir: ./infra, environments: [prod] }\n');
    const r = check(file, [], `${tools}:${process.env.PATH}`);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^warning: publications\.accept: no kind is accepted/m);
  });

  it('warns that an apply-enabled component in a working directory that is no git checkout can never be approved', async () => {
    const key = await publicKeyToText((await generateSigningKeyPair()).publicKey);
    mkdirSync(join(dir, 'checkout'));
    spawnSync('git', ['init', '-q', '-b', 'main'], { cwd: join(dir, 'checkout') });
    writeFileSync(join(dir, 'checkout', 'main.tf'), '# app\n');
    spawnSync('git', ['-c', 'user.email=a@b', '-c', 'user.name=a', 'commit', '-qm', 'x', '--allow-empty'], {
      cwd: join(dir, 'checkout'),
    });
    const file = config(
      'applyDirs.yaml',
      `  - { name: network, workingDir: ./infra, environments: [prod], apply: { approvers: ["${key}"] } }\n` +
        `  - { name: app, workingDir: ./checkout, environments: [prod], apply: { approvers: ["${key}"] } }\n`,
    );
    const r = check(file, [], `${tools}:${process.env.PATH}`);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      `warning: components[0].apply: network has apply but its working directory "${join(dir, 'infra')}" is not a git checkout, so its plans name no full commit id and can never be approved; make it a git checkout`,
    );
    expect(r.stdout).not.toMatch(/components\[1\]\.apply/);
  });

  it('with --online, says whether each upstream answers and accepts the token', async () => {
    const comp = '  - { name: network, workingDir: ./infra, environments: [prod] }\n';
    const good = config('online.yaml', comp, `[{ url: "${serverUrl}", tokenFile: ./token }]`);
    const ok = await checkOnline(good, ['--json'], `${tools}:${process.env.PATH}`);
    expect(ok.status, ok.stdout).toBe(0);
    expect(JSON.parse(ok.stdout).upstreams).toEqual([
      { url: serverUrl, answers: true, server: 'relay relay-1', tokenAccepted: true },
    ]);

    const refused = config('refused.yaml', comp, `[{ url: "${serverUrl}", tokenFile: ./wrong.token }]`);
    const r = await checkOnline(refused, [], `${tools}:${process.env.PATH}`);
    expect(r.status).toBe(2);
    expect(r.stdout).toContain(`upstream ${serverUrl}: answers (relay relay-1), token REFUSED`);
    expect(r.stderr).toMatch(/- upstreams\[0\]\.tokenFile: .* the token was refused: unauthorized/);

    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const down = config('down.yaml', comp, `[{ url: "http://127.0.0.1:${port}", tokenFile: ./token }]`);
    const d = await checkOnline(down, [], `${tools}:${process.env.PATH}`);
    expect(d.status).toBe(1);
    expect(d.stdout).toContain(
      `upstream http://127.0.0.1:${port}: does not answer — GET /v1/health: connect ECONNREFUSED`,
    );
  });

  it('prints the JSON Schema of agent.yaml, a one-line meaning on every key', () => {
    const r = spawnSync(process.execPath, [bin, 'config', 'schema'], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    const schema = JSON.parse(r.stdout);
    expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#');
    expect(schema.required).toEqual([
      'site',
      'agent',
      'dataDir',
      'hubPublicKeyFile',
      'upstreams',
      'components',
    ]);
    expect(schema.properties.sync.properties.planOnStart).toMatchObject({ type: 'boolean', default: true });
    const undescribed: string[] = [];
    type Node = {
      description?: string;
      anyOf?: Node[];
      items?: Node;
      additionalProperties?: Node | boolean;
      properties?: Record<string, Node>;
    };
    const walk = (s: Node, path: string) => {
      for (const b of s.anyOf ?? [s]) {
        if (b.items) walk(b.items, `${path}[]`);
        if (typeof b.additionalProperties === 'object') walk(b.additionalProperties, `${path}.*`);
        for (const [k, p] of Object.entries(b.properties ?? {})) {
          if (!p.description || p.description.includes('\n')) undescribed.push(`${path}.${k}`);
          walk(p, `${path}.${k}`);
        }
      }
    };
    walk(schema, '');
    expect(undescribed).toEqual([]);
  });
});
