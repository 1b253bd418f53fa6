import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { freePort, waitForHttp } from '../src/topology/ports.js';
import { BINS, FAKE_TERRAFORM_DIR, runProgram } from '../src/topology/programs.js';
import { parseStrictJson } from './strictJson.js';
import { setUpHub } from './support.js';

/** A program run with its output kept: stdout and stderr as text. */
interface Captured {
  name: string;
  child: ChildProcess;
  stdout: string;
  stderr: string;
  exited: Promise<unknown>;
  /** Resolves once `text` is in its stderr; rejects, naming what it said, if it exits first. */
  said(text: string): Promise<void>;
}
const running: Captured[] = [];
afterAll(() => {
  for (const c of running) if (c.child.exitCode === null) c.child.kill('SIGKILL');
});

function capture(
  name: string,
  bin: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
) {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: opts.cwd,
    // Every level: a key repeated in a debug line counts as much as one in an error line.
    env: { ...process.env, LOG_LEVEL: 'debug', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const heard: Array<{ text: string; resolve: () => void }> = [];
  const exited = new Promise<unknown>((r) => child.once('exit', r));
  const c: Captured = {
    name,
    child,
    stdout: '',
    stderr: '',
    exited,
    // an event, not a deadline: the program's own line, or its exit (vitest's timeout guards a hang)
    said: (text) =>
      c.stderr.includes(text)
        ? Promise.resolve()
        : Promise.race([
            new Promise<void>((resolve) => heard.push({ text, resolve })),
            exited.then(() => {
              if (!c.stderr.includes(text))
                throw new Error(`${name} exited before saying "${text}":\n${c.stderr.slice(-2000)}`);
            }),
          ]),
  };
  child.stdout?.on('data', (d: Buffer) => {
    c.stdout += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    c.stderr += d.toString();
    for (const h of heard.filter((h) => c.stderr.includes(h.text))) {
      heard.splice(heard.indexOf(h), 1);
      h.resolve();
    }
  });
  running.push(c);
  return c;
}

/** What is wrong with a program's stderr as O2 in docs/architecture.md#invariants has it: lines that are not JSON, or repeat a key. */
function stderrProblems(c: Captured): string[] {
  const problems: string[] = [];
  for (const line of c.stderr.split('\n').filter((l) => l.trim() !== '')) {
    try {
      const { value, duplicates } = parseStrictJson(line);
      if (typeof value !== 'object' || value === null || Array.isArray(value))
        problems.push(`${c.name}: not a JSON object: ${line}`);
      else if (!('level' in value && 'msg' in value && 'time' in value))
        problems.push(`${c.name}: a JSON line that is not a log record: ${line}`);
      if (duplicates.length > 0) problems.push(`${c.name}: key ${duplicates.join(', ')} twice in: ${line}`);
    } catch {
      problems.push(`${c.name}: not JSON: ${line}`);
    }
  }
  return problems;
}

/** Lines of stdout that are log records (pino's `level` + `time` + `msg`). */
function logLinesIn(text: string): string[] {
  return text.split('\n').filter((l) => {
    try {
      const v = JSON.parse(l) as Record<string, unknown>;
      return typeof v === 'object' && v !== null && 'level' in v && 'msg' in v;
    } catch {
      return false;
    }
  });
}

describe('strict JSON parsing', () => {
  it('finds a repeated key that JSON.parse would keep silently, at any depth', () => {
    expect(parseStrictJson('{"a":1,"b":{"c":[{"d":1,"d":2}]},"a":3}').duplicates).toEqual(['b.c.[0].d', 'a']);
    expect(parseStrictJson('{"msg":"a \\"quoted\\" word","n":-1.5e3,"ok":true,"x":null}').duplicates).toEqual(
      [],
    );
    expect(() => parseStrictJson('{"a":1} trailing')).toThrow(SyntaxError);
    expect(() => parseStrictJson('hub listening on http://x')).toThrow(SyntaxError);
  });
});

describe('logs of the programs (O2 in docs/architecture.md#invariants)', () => {
  it('hub, relay and agent log only JSON lines on stderr, with no key twice, and print no log on stdout', {
    timeout: 300_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'driftline-logs-'));
    const [hubPort, relayPort] = [await freePort(), await freePort()];
    const hub = await setUpHub(dir, hubPort, { name: 'ship-lan', sites: ['ship-7'] });
    const relayConfig = join(dir, 'relay.yaml');
    writeFileSync(
      relayConfig,
      stringify({
        name: 'ship-lan',
        dataDir: join(dir, 'relay-data'),
        listen: { port: relayPort },
        sites: ['ship-7'],
        upstreams: [{ url: hub.url, token: hub.relayToken }],
        forward: { idleMs: 300, pullIntervalMs: 1000, backoffBaseMs: 300, backoffMaxMs: 3000 },
      }),
    );
    const agentToken = JSON.parse(
      await runProgram('relay', ['token', 'add', 'ship-7', '--config', relayConfig, '--json']),
    ).token;
    const site = join(dir, 'ship-7');
    mkdirSync(join(site, 'infra', 'network'), { recursive: true });
    writeFileSync(join(site, 'token'), agentToken);
    writeFileSync(join(site, 'hub.pub'), hub.key);
    const agentConfig = join(site, 'agent.yaml');
    writeFileSync(
      agentConfig,
      stringify({
        site: 'ship-7',
        agent: 'a1',
        dataDir: './data',
        hubPublicKeyFile: './hub.pub',
        upstreams: [{ url: `http://127.0.0.1:${relayPort}`, tokenFile: './token' }],
        components: [
          { name: 'network', workingDir: './infra/network', environments: ['prod'], schedule: '0 0 1 1 *' },
        ],
        sync: { intervalS: 1, jitterS: 0, rejectedRetryS: 2 },
      }),
    );
    const init = JSON.parse(await runProgram('agent', ['init', '--config', agentConfig, '--json']));
    const env = { PATH: `${FAKE_TERRAFORM_DIR}:${process.env.PATH}` };

    const daemons = [
      capture('hub run', BINS.hub, ['run', '--config', hub.config]),
      capture('relay run', BINS.relay, ['run', '--config', relayConfig]),
    ];
    await waitForHttp(`${hub.url}/v1/health`, 60_000);
    await waitForHttp(`http://127.0.0.1:${relayPort}/v1/health`, 60_000);
    // Started before its enrolment, so the logs include a rejection, then a merge, an ack and a prune.
    daemons.push(capture('edge-agent run', BINS.agent, ['run', '--config', agentConfig], { cwd: site, env }));
    const agent = daemons[2] as Captured;
    await agent.said('waiting for enrolment');
    await runProgram('hub', ['enroll', '--config', hub.config, init.enrollment]);
    // its one cell's first run, acknowledged (the ack's own log line says how many runs it covered)
    await agent.said('"runsAcked":1,');
    const s = JSON.parse(
      await runProgram('agent', ['status', '--config', agentConfig, '--json'], { cwd: site }),
    );
    expect([s.unackedRuns, s.lastAckAt !== null]).toEqual([0, true]);
    // Stopped as an operator stops them: the shutdown logs count too.
    for (const d of [...daemons].reverse()) {
      d.child.kill('SIGTERM');
      await d.exited;
    }
    const plan = capture('edge-agent plan', BINS.agent, ['plan', '--config', agentConfig], {
      cwd: site,
      env,
    });
    await plan.exited;
    expect(plan.child.exitCode).toBe(0);

    for (const d of daemons) expect(d.stdout, `${d.name} printed on stdout`).toBe('');
    expect(logLinesIn(plan.stdout)).toEqual([]);
    expect(plan.stdout).toMatch(/network\/prod: /); // what `plan` was asked to print
    expect([...daemons, plan].flatMap(stderrProblems)).toEqual([]);
    // The test saw real work: every program logged something.
    for (const d of [...daemons, plan]) expect(d.stderr.length, d.name).toBeGreaterThan(0);
  });
});
