import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as A from '@automerge/automerge';
import { AgentDocSchema, plainAgentDoc } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { openSqliteLedger } from '../src/adapters/sqlite/openSqliteLedger.js';
import { CUSTOM_MESSAGE_DROPPED } from '../src/core/plan/diagnostics.js';
import { childLines } from './helpers/childLines.js';
import { tempDir } from './helpers/storeFixtures.js';

const bin = fileURLToPath(new URL('../bin/edge-agent.js', import.meta.url));
const SIM_TERRAFORM = fileURLToPath(new URL('../../simulation/bin/terraform', import.meta.url));
const SECRET = 'correct-horse-battery-staple';
const cli = (args: string[], env: NodeJS.ProcessEnv = process.env) =>
  spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', env });

describe('edge-agent daemon, a plan that fails a variable validation rule', () => {
  it('records the failure with an excerpt that holds neither the value nor the -var-file line', {
    timeout: 150_000,
  }, async () => {
    const dir = tempDir();
    const work = join(dir, 'infra');
    const tools = join(dir, 'bin');
    mkdirSync(work);
    mkdirSync(tools);
    symlinkSync(SIM_TERRAFORM, join(tools, 'terraform'));
    // Variant 0 quotes the value in the snippet only; variant 1 in the rule's message as well.
    writeFileSync(
      join(work, 'fake-terraform.yaml'),
      'steps:\n  - state: invalid-variable\n  - state: invalid-variable\n    variant: 1\n',
    );
    writeFileSync(join(work, 'staging.tfvars'), `db_password = "${SECRET}"\n`);
    writeFileSync(join(dir, 'token'), 'agent-token\n');
    writeFileSync(join(dir, 'hub.pub'), 'ed25519:lrF3pwuGnJ6mZQsKmoWVHO3zn1Yi683wSjDanFjASqs\n');
    const config = join(dir, 'agent.yaml');
    writeFileSync(
      config,
      `site: ship-7
agent: a1
dataDir: ./data
hubPublicKeyFile: ./hub.pub
upstreams: [{ url: "http://127.0.0.1:9", tokenFile: ./token }]
components:
  - name: db
    workingDir: ./infra
    environments: [{ name: staging, varFiles: [staging.tfvars] }]
    schedule: "*/2 * * * * *"
sync: { intervalS: 60, jitterS: 0, recordWindowS: 0 }
`,
    );
    expect(cli(['init', '--config', config]).status).toBe(0);
    // info: the agent logs each result it records, which is what the test waits on (and every such line
    // is searched for the secret below too)
    const env = { ...process.env, PATH: `${tools}:${process.env.PATH}`, LOG_LEVEL: 'info' };
    const agent = spawn(process.execPath, [bin, 'run', '--config', config], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const out = childLines(agent.stderr);
    try {
      await out.next(/"msg":"result recorded"/, 2);
      const s = cli(['status', '--config', config, '--json'], env);
      expect(s.status, s.stderr).toBe(0);
      expect(JSON.parse(s.stdout).unackedRuns).toBeGreaterThanOrEqual(2);
    } finally {
      agent.kill('SIGTERM');
    }
    const stderr = () => out.text();
    expect(await new Promise((r) => agent.on('exit', r)), stderr()).toBe(0);

    const { ledger: store } = openSqliteLedger({
      path: join(dir, 'data', 'agent.sqlite'),
      site: 'ship-7',
      agent: 'a1',
    });
    const raw = store.loadEpoch(store.status().epoch);
    const doc = AgentDocSchema.parse(plainAgentDoc(A.toJS(raw)));
    store.close();
    const runs = Object.values(doc.runs).filter((r) => r.environment === 'staging');
    expect(runs.length).toBeGreaterThanOrEqual(2);
    for (const r of runs)
      expect(r.summary).toMatchObject({ status: 'failed', reason: 'exit-1', exitCode: 1 });
    const excerpts = runs.map((r) => r.summary.errorExcerpt);
    expect(excerpts).toContainEqual(expect.stringContaining('Error: Invalid value for variable'));
    // Both variants' rule messages are the author's text: dropped, whether or not they quote the value.
    for (const e of excerpts) expect(e).toContain(CUSTOM_MESSAGE_DROPPED);
    expect(JSON.stringify(doc)).not.toContain(SECRET);
    expect(JSON.stringify(doc)).not.toContain('db_password =');
    for (const f of ['agent.sqlite', 'agent.sqlite-wal']) {
      const path = join(dir, 'data', f);
      if (existsSync(path)) expect(readFileSync(path).includes(SECRET)).toBe(false);
    }
    expect(stderr()).not.toContain(SECRET);
  });
});
