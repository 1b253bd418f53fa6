import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BINS, FAKE_TERRAFORM_DIR, ROOT } from '../src/topology/programs.js';

/**
 * The example configs, their committed JSON Schemas and docs/configuration.md stay true to the programs:
 * each is checked against what the programs themselves print, as processes (no service code imported).
 */

const EXAMPLES = join(ROOT, 'examples');
const PROGRAMS = [
  { bin: BINS.hub, example: 'hub.yaml', schema: 'hub' },
  { bin: BINS.relay, example: 'relay.yaml', schema: 'relay' },
  { bin: BINS.agent, example: 'agent.yaml', schema: 'agent' },
] as const;

function run(bin: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  const r = spawnSync(process.execPath, [bin, ...args], {
    cwd: opts.cwd,
    encoding: 'utf8',
    env: { ...process.env, LOG_LEVEL: 'silent', ...opts.env },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

type Schema = {
  properties?: Record<string, Schema>;
  items?: Schema;
  anyOf?: Schema[];
  additionalProperties?: unknown;
};

/** Every key name in a JSON Schema, at any depth. */
function keyNames(s: Schema, out = new Set<string>()): Set<string> {
  for (const b of s.anyOf ?? [s]) {
    if (b.items) keyNames(b.items, out);
    if (typeof b.additionalProperties === 'object') keyNames(b.additionalProperties as Schema, out);
    for (const [k, p] of Object.entries(b.properties ?? {})) {
      out.add(k);
      keyNames(p, out);
    }
  }
  return out;
}

describe('configuration reference', { timeout: 120_000 }, () => {
  it.each(PROGRAMS)('$schema config schema prints the committed examples/schema copy', ({ bin, schema }) => {
    const r = run(bin, ['config', 'schema']);
    expect(r.status, r.stderr).toBe(0);
    const committed = readFileSync(join(EXAMPLES, 'schema', `${schema}.schema.json`), 'utf8');
    expect(r.stdout, 'examples/schema is out of date: run npx tsx scripts/config-docs.ts').toBe(committed);
  });

  it('docs/configuration.md is what scripts/config-docs.ts generates, with a meaning for every key', () => {
    const r = spawnSync(
      process.execPath,
      ['--import', 'tsx', join(ROOT, 'scripts/config-docs.ts'), '--check'],
      {
        cwd: ROOT,
        encoding: 'utf8',
      },
    );
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const md = readFileSync(join(ROOT, 'docs/configuration.md'), 'utf8');
    for (const { schema } of PROGRAMS) {
      const s = JSON.parse(readFileSync(join(EXAMPLES, 'schema', `${schema}.schema.json`), 'utf8')) as Schema;
      for (const k of keyNames(s)) expect(md).toMatch(new RegExp(`\`[^\`]*\\b${k}\` \\|`));
    }
  });

  it.each(PROGRAMS)(
    'examples/$example names its schema on line 1 and shows every key with a comment',
    ({ example, schema }) => {
      const text = readFileSync(join(EXAMPLES, example), 'utf8');
      expect(text.split('\n')[0]).toBe(`# yaml-language-server: $schema=./schema/${schema}.schema.json`);
      const s = JSON.parse(readFileSync(join(EXAMPLES, 'schema', `${schema}.schema.json`), 'utf8')) as Schema;
      const missing = [...keyNames(s)].filter(
        (k) => !new RegExp(`^\\s*(#\\s*)?(-\\s+)?${k}:.*\\s#\\s`, 'm').test(text),
      );
      expect(missing).toEqual([]);
    },
  );

  it('config check passes on each example, set up as an operator would, run from another directory', () => {
    const dir = mkdtempSync(join(tmpdir(), 'driftline-examples-'));
    cpSync(EXAMPLES, dir, { recursive: true });
    const elsewhere = mkdtempSync(join(tmpdir(), 'driftline-cwd-'));
    const at = (f: string) => join(dir, f);
    const ok = (r: ReturnType<typeof run>) => {
      expect(r.status, r.stderr).toBe(0);
      return r.stdout;
    };

    // Headquarters: the hub's store and key, the key agents pin, a token for the relay.
    ok(run(BINS.hub, ['init', '--config', at('hub.yaml')], { cwd: elsewhere }));
    writeFileSync(at('hub.pub'), ok(run(BINS.hub, ['key', '--config', at('hub.yaml')], { cwd: elsewhere })));
    const peer = [
      'peer',
      '--config',
      at('hub.yaml'),
      '--name',
      'relay-1',
      '--sites',
      'ship-7',
      '--no-key',
      '--json',
    ];
    writeFileSync(at('relay-upstream.token'), JSON.parse(ok(run(BINS.hub, peer, { cwd: elsewhere }))).token);
    ok(
      run(BINS.hub, ['user', 'add', 'ada', '--role', 'admin', '--config', at('hub.yaml')], {
        cwd: elsewhere,
      }),
    );
    // The relay's token for the site's agent; the component's working directory.
    const add = ['token', 'add', 'ship-7', '--config', at('relay.yaml'), '--json'];
    writeFileSync(at('agent.token'), JSON.parse(ok(run(BINS.relay, add, { cwd: elsewhere }))).token);
    mkdirSync(at('infra/network'), { recursive: true });

    const hub = JSON.parse(
      ok(run(BINS.hub, ['config', 'check', '--config', at('hub.yaml'), '--json'], { cwd: elsewhere })),
    );
    expect(hub).toMatchObject({
      ok: true,
      listen: { hop: '127.0.0.1:8443', api: '127.0.0.1:8080' },
      dataDir: at('hub-data'),
      users: 1,
      problems: [],
    });
    const relay = JSON.parse(
      ok(run(BINS.relay, ['config', 'check', '--config', at('relay.yaml'), '--json'], { cwd: elsewhere })),
    );
    expect(relay).toMatchObject({
      ok: true,
      listen: '127.0.0.1:7000',
      dataDir: at('relay-data'),
      sites: ['ship-7'],
      upstreams: [{ url: 'http://127.0.0.1:8443' }],
      problems: [],
      warnings: [],
    });
    const agentArgs = ['config', 'check', '--config', at('agent.yaml'), '--json'];
    const env = { PATH: `${FAKE_TERRAFORM_DIR}:${process.env.PATH}` };
    const agent = JSON.parse(ok(run(BINS.agent, agentArgs, { cwd: elsewhere, env })));
    expect(agent).toMatchObject({
      ok: true,
      site: 'ship-7',
      agent: 'a1',
      cells: ['prod/network'],
      problems: [],
    });
    expect(agent.tools).toEqual([
      {
        component: 'network',
        key: 'tool',
        program: 'terraform',
        path: join(FAKE_TERRAFORM_DIR, 'terraform'),
        version: expect.stringMatching(/^Terraform v\d+\.\d+\.\d+$/),
      },
    ]);
    expect(agent.files.map((f: { file: string; ok: boolean }) => [f.file, f.ok])).toEqual([
      [at('hub.pub'), true],
      [at('agent.token'), true],
    ]);
  });

  it('the README links the configuration reference and the examples', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(readme).toContain('](docs/configuration.md)');
    expect(readme).toContain('](examples/)');
  });
});
