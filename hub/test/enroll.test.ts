import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteHubStore } from '../src/adapters/sqlite/SqliteHubStore.js';

const hubBin = fileURLToPath(new URL('../bin/hub.js', import.meta.url));
const agentBin = fileURLToPath(new URL('../../edge-agent/bin/edge-agent.js', import.meta.url));
const run = (bin: string, args: string[], cwd: string) =>
  spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', cwd });

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A headquarters folder with hub.yaml, and an outpost folder with agent.yaml for `site`/`agent`. */
function layout(site = 'ship-7', agent = 'a1') {
  const root = mkdtempSync(join(tmpdir(), 'hub-enroll-'));
  dirs.push(root);
  const hq = join(root, 'hq');
  const outpost = join(root, 'outpost');
  for (const d of [hq, outpost]) mkdirSync(d);
  writeFileSync(join(hq, 'hub.yaml'), 'dataDir: ./hub-data\n');
  writeFileSync(
    join(outpost, 'agent.yaml'),
    `site: ${site}\nagent: ${agent}\ndataDir: ./data\nhubPublicKeyFile: ./hub.pub\n` +
      'upstreams:\n  - url: http://127.0.0.1:9\n    tokenFile: ./token\n' +
      'components:\n  - name: net\n    workingDir: ./infra\n    environments: [prod]\n',
  );
  return { hq, outpost };
}

async function agentsAndAudit(hq: string) {
  const store = new SqliteHubStore(join(hq, 'hub-data', 'hub.db'));
  try {
    return { agents: await store.listAgents(), audit: await store.listAudit({ limit: 10 }) };
  } finally {
    await store.close();
  }
}

describe('enrolment from edge-agent init to hub enroll', () => {
  it('enrols into the hub’s store with the line init printed, pasted as it is, and audits it', async () => {
    const { hq, outpost } = layout();
    const init = run(agentBin, ['init', '--config', 'agent.yaml'], outpost);
    expect(init.status, init.stderr).toBe(0);
    const line = init.stdout.trim();
    expect(line).toMatch(/^hub enroll --config hub\.yaml dle1\.[A-Za-z0-9_-]+\.[0-9a-f]{8}$/);
    expect(init.stderr).toContain('hub machine');
    const json = JSON.parse(run(agentBin, ['init', '--config', 'agent.yaml', '--json'], outpost).stdout) as {
      publicKey: string;
      enrollment: string;
      enrollCommand: string;
    };
    expect(json.enrollCommand).toBe(line);
    expect(line.endsWith(` ${json.enrollment}`)).toBe(true);

    const [program, ...args] = line.split(' ');
    expect(program).toBe('hub');
    const enrolled = run(hubBin, args, hq);
    expect(enrolled.status, enrolled.stderr).toBe(0);
    expect(enrolled.stdout).toContain('enrolled ship-7/a1 in ');
    expect(enrolled.stdout).toContain(join('hub-data', 'hub.db'));
    const { agents, audit } = await agentsAndAudit(hq);
    expect(agents.map((a) => [a.site, a.agent, a.publicKey])).toEqual([['ship-7', 'a1', json.publicKey]]);
    expect(audit.map((a) => [a.action, a.target, a.actor, a.outcome])).toEqual([
      ['agent.enroll', 'ship-7/a1', 'cli', 'ok'],
    ]);
  }, 120_000);

  it('keeps the --site/--agent/--key form working', async () => {
    const { hq, outpost } = layout('ship-8', 'b2');
    const { publicKey } = JSON.parse(
      run(agentBin, ['init', '--config', 'agent.yaml', '--json'], outpost).stdout,
    );
    const r = run(
      hubBin,
      ['enroll', '-c', 'hub.yaml', '--site', 'ship-8', '--agent', 'b2', '--key', publicKey, '--json'],
      hq,
    );
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ site: 'ship-8', agent: 'b2', replaced: false });
  }, 120_000);

  it('refuses a damaged string, a missing --config and a wrong folder, saying what to do, and enrols nothing', async () => {
    const { hq, outpost } = layout();
    const { enrollment } = JSON.parse(
      run(agentBin, ['init', '--config', 'agent.yaml', '--json'], outpost).stdout,
    );
    const cut = run(hubBin, ['enroll', '--config', 'hub.yaml', enrollment.slice(0, -5)], hq);
    expect(cut.status).toBe(2);
    expect(cut.stderr).toMatch(/cut or changed|incomplete/);
    expect(cut.stderr).toContain('edge-agent init');
    const notOne = run(hubBin, ['enroll', '--config', 'hub.yaml', 'ship-7'], hq);
    expect(notOne.status).toBe(2);
    expect(notOne.stderr).toContain('not an enrolment string');
    const noConfig = run(hubBin, ['enroll', enrollment], hq);
    expect(noConfig.status).toBe(2);
    expect(noConfig.stderr).toContain('--config is required');
    const elsewhere = run(hubBin, ['enroll', '--config', 'hub.yaml', enrollment], outpost);
    expect(elsewhere.status).toBe(2);
    expect(elsewhere.stderr).toContain("where the hub's hub.yaml is");
    const both = run(hubBin, ['enroll', '--config', 'hub.yaml', enrollment, '--site', 'ship-7'], hq);
    expect(both.status).toBe(2);
    const none = run(hubBin, ['enroll', '--config', 'hub.yaml'], hq);
    expect(none.status).toBe(2);
    expect(none.stderr).toContain('dle1.');
    expect(existsSync(join(hq, 'hub-data')), 'no store was even created').toBe(false);
  }, 120_000);

  it('names the key `hub key` prints', () => {
    const r = run(hubBin, ['key', '--help'], tmpdir());
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('Ed25519 public key');
    expect(r.stdout).toContain('hubPublicKeyFile');
  });
});
