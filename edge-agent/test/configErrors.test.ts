import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHopServer, MemoryHopBackend } from '@driftline/hop';
import { lockRace } from '@driftline/hop/testing';
import { generateSigningKeyPair, publicKeyToText } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { tempDir } from './helpers/storeFixtures.js';

const bin = fileURLToPath(new URL('../bin/edge-agent.js', import.meta.url));
const agent = (args: string[]) =>
  spawnSync(process.execPath, [bin, ...args], {
    encoding: 'utf8',
    env: { ...process.env, LOG_LEVEL: 'silent' },
  });

/** A directory with hub.pub (a fresh hub key), a token and agent.yaml ending in `tail`. */
async function site(tail: string, upstreams = '[{ url: "http://127.0.0.1:9", tokenFile: ./token }]') {
  const dir = tempDir('driftline-config-errors-');
  const hubKey = await publicKeyToText((await generateSigningKeyPair()).publicKey);
  writeFileSync(join(dir, 'hub.pub'), hubKey);
  writeFileSync(join(dir, 'token'), 't');
  const config = join(dir, 'agent.yaml');
  writeFileSync(
    config,
    `site: s\nagent: a\ndataDir: ./data\nhubPublicKeyFile: ./hub.pub\nupstreams: ${upstreams}\ncomponents:\n  - name: c\n    workingDir: .\n    environments: [prod]\n${tail.replaceAll('HUBKEY', hubKey)}`,
  );
  return config;
}

describe('edge-agent configuration errors (one loader, docs/decisions/250)', { timeout: 60_000 }, () => {
  it('names a misspelled key and a wrong type by their full key path, in config check and in run', async () => {
    const config = await site(
      '    schedule: { plan: 5 }\n',
      '[{ url: "http://127.0.0.1:9", tokenFlie: ./token }]',
    );
    const lines = [
      'upstreams[0].tokenFlie: unknown key; did you mean upstreams[0].tokenFile?',
      'upstreams[0].tokenFile: required: expected a string, found nothing',
    ];
    const check = agent(['config', 'check', '--config', config]);
    expect(check.status).toBe(2);
    for (const l of lines) expect(check.stderr).toContain(l);
    const run = agent(['run', '--config', config]);
    expect(run.status).toBe(2);
    for (const l of lines) expect(run.stderr).toContain(l);
  });

  it("config check refuses the hub's own key pinned as an approver, as run does", async () => {
    const config = await site('    apply: { approvers: ["HUBKEY"] }\n');
    const check = agent(['config', 'check', '--config', config]);
    expect(check.status).toBe(2);
    expect(check.stderr).toContain(
      "components[0].apply.approvers[0]: the hub's public key is pinned as an approver (component c)",
    );
  });

  it('exits 2 from run without an agent key, naming the file and what makes it (issue 42)', async () => {
    const config = await site('');
    const run = agent(['run', '--config', config]);
    expect(run.status).toBe(2);
    expect(run.stderr).toBe(
      `edge-agent run: no agent key at ${join(dirname(config), 'data', 'agent-key.pem')} (run \`edge-agent init --config <file>\` first)\n`,
    );
  });

  it('runs one agent per data directory: a second exits 2 naming the holder; a restart after SIGKILL is not blocked', async () => {
    const config = await site('');
    expect(agent(['init', '--config', config]).status).toBe(0);
    const dataDir = join(dirname(config), 'data');
    const r = await lockRace(
      [process.execPath, bin, 'run', '--config', config, '--no-schedule'],
      join(dataDir, 'agent.lock'),
      { readyLine: /"msg":"agent started"/ },
    );
    expect(r.second.status).toBe(2);
    expect(r.second.stderr).toMatch(
      new RegExp(
        `^edge-agent run: ${dataDir} is in use by PID ${r.firstPid} \\(edge-agent run, since [^\\n]*\\n$`,
      ),
    );
    expect(r.restartTook).toBe(true);
    expect(r.restartExit).toBe(0);
  });

  it("logs an upstream's 401 as `refused by <upstream>: <reason>`, not as unreachable (issue 42)", async () => {
    const backend = new MemoryHopBackend({ name: 'relay-1', role: 'relay' });
    backend.addToken('the-right-token', { name: 's', sites: ['s'] });
    const hop = createHopServer(backend, { uploads: { directory: tempDir('driftline-tus-') } });
    const { port } = await hop.listen(0, '127.0.0.1');
    const url = `http://127.0.0.1:${port}`;
    const config = await site('', `[{ url: "${url}", tokenFile: ./token }]`);
    expect(agent(['init', '--config', config]).status).toBe(0);
    const fakeTerraform = fileURLToPath(new URL('../../simulation/bin', import.meta.url));
    const child = spawn(process.execPath, [bin, 'run', '--config', config], {
      env: { ...process.env, LOG_LEVEL: 'info', PATH: `${fakeTerraform}:${process.env.PATH}` },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    try {
      const line = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no refusal logged: ${stderr.slice(-2000)}`)),
          60_000,
        );
        child.stderr.on('data', (d) => {
          stderr += d;
          const hit = stderr.split('\n').find((l) => l.includes('refused by'));
          if (hit) {
            clearTimeout(timer);
            resolve(hit);
          }
        });
      });
      expect(JSON.parse(line)).toMatchObject({
        level: 40,
        upstream: url,
        msg: expect.stringMatching(
          new RegExp(`^refused by ${url}: unauthorized: the bearer token is unknown`),
        ),
      });
      expect(stderr).not.toContain('no upstream reachable');
    } finally {
      child.kill('SIGKILL');
      await hop.close();
    }
  });
});
