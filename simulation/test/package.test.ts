/**
 * The outpost's offline install as an operator gets it: `npm run package`'s tarball unpacked into an
 * empty folder and run from there, with no node_modules on PATH, nothing on NODE_PATH and a working
 * directory outside the checkout. Its agent plans with the fake terraform and its relay carries the
 * result to a hub run from source. `DRIFTLINE_PACKAGE=<tarball>` tests a tarball built earlier instead
 * of building one.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { buildPackage } from '../../scripts/package/build.js';
import { TARGETS } from '../../scripts/package/platform.js';
import { freePort, waitForHttp } from '../src/topology/ports.js';
import { BINS, FAKE_TERRAFORM_DIR, ROOT, runProgram } from '../src/topology/programs.js';
import { ProcessGroup, setUpHub, until } from './support.js';

const dir = mkdtempSync(join(tmpdir(), 'driftline-package-test-'));
const inst = join(dir, 'opt');
const work = join(dir, 'work');
const hubs = new ProcessGroup();
const daemons: ChildProcess[] = [];

// Only what a bare machine has: PATH without the checkout (node_modules/.bin, simulation/bin), no
// NODE_PATH or NODE_OPTIONS; `tools/` holds the fake terraform alone.
const tools = join(dir, 'tools');
const PATH = [
  tools,
  ...(process.env.PATH ?? '')
    .split(delimiter)
    .filter((p) => p && !p.includes('node_modules') && !p.startsWith(ROOT)),
].join(delimiter);
const ENV = { PATH, HOME: work, LOG_LEVEL: 'warn' };

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `bin/<program>` of the unpacked package to completion. */
function pkg(
  program: 'edge-agent' | 'relay',
  args: string[],
  env: Record<string, string> = {},
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const p = spawn(join(inst, 'bin', program), args, { cwd: work, env: { ...ENV, ...env } });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    p.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    p.on('error', reject);
    p.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Starts `bin/<program>` of the package as a daemon; its stderr is kept for a failure message. */
function daemon(program: 'edge-agent' | 'relay', args: string[]): { proc: ChildProcess; log: () => string } {
  const proc = spawn(join(inst, 'bin', program), args, {
    cwd: work,
    env: ENV,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  proc.stderr?.on('data', (d: Buffer) => {
    log += d.toString();
  });
  daemons.push(proc);
  return { proc, log: () => log };
}

function run(cmd: string, args: string[], cwd: string): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { cwd, env: ENV });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    p.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    p.on('error', reject);
    p.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

beforeAll(async () => {
  mkdirSync(inst);
  mkdirSync(work);
  mkdirSync(tools);
  symlinkSync(join(FAKE_TERRAFORM_DIR, 'terraform'), join(tools, 'terraform'));
  // Else the tarball the global set-up built for this run (edgePackage.setup.ts), else a new one.
  let tarball = process.env.DRIFTLINE_PACKAGE ?? process.env.DRIFTLINE_EDGE_TARBALL;
  if (!tarball) {
    const target = TARGETS.find((t) => t.nodeArch === process.arch);
    if (!target) throw new Error(`no package target for ${process.arch}`);
    tarball = (await buildPackage(target, join(dir, 'dist'))).tarball;
  }
  const untar = await run('tar', ['xzf', tarball], inst);
  if (untar.code !== 0) throw new Error(`tar xzf ${tarball}: ${untar.stderr}`);
}, 600_000);

afterAll(async () => {
  for (const p of daemons.reverse())
    if (p.exitCode === null && p.signalCode === null) {
      const done = new Promise((r) => p.once('exit', r));
      p.kill('SIGTERM');
      await done;
    }
  await hubs.stopAll();
  rmSync(dir, { recursive: true, force: true }); // ~150 MB: the tarball and its unpacked copy
});

describe('the offline package', () => {
  it('unpacks into an empty folder with no node_modules, and every file matches SHA256SUMS', async () => {
    expect(readdirSync(inst).sort()).toEqual([
      'INSTALL.md',
      'SHA256SUMS',
      'VERSION',
      'bin',
      'docs',
      'examples',
      'lib',
      'node',
      'systemd',
    ]);
    expect(readdirSync(join(inst, 'lib')).sort()).toEqual([
      'automerge_wasm_bg.wasm',
      'better_sqlite3.node',
      'cbor_extract.node',
      'edge-agent.mjs',
      'edge-agent.mjs.map',
      'relay.mjs',
      'relay.mjs.map',
    ]);
    // One-byte source (V8 would keep a bundle with any non-ASCII character as two-byte text in memory).
    for (const b of ['edge-agent.mjs', 'relay.mjs'])
      expect(
        readFileSync(join(inst, 'lib', b)).every((byte) => byte < 0x80),
        b,
      ).toBe(true);
    // Source maps name files of the checkout, not the builder's temporary folders.
    for (const m of ['edge-agent.mjs.map', 'relay.mjs.map']) {
      const sources = (JSON.parse(readFileSync(join(inst, 'lib', m), 'utf8')) as { sources: string[] })
        .sources;
      expect(
        sources.filter((s) => s.startsWith('..') || s.startsWith('/')),
        m,
      ).toEqual([]);
      expect(sources, m).toContain(m.startsWith('relay') ? 'relay/src/cli.ts' : 'edge-agent/src/cli.ts');
    }
    // Self-contained text: the reference INSTALL.md names is here, the examples name no checkout path.
    expect(readFileSync(join(inst, 'INSTALL.md'), 'utf8')).toContain('docs/configuration.md');
    expect(readFileSync(join(inst, 'docs/configuration.md'), 'utf8')).toContain('## agent.yaml');
    expect(readFileSync(join(inst, 'examples/agent.yaml'), 'utf8')).not.toContain('simulation/bin');
    expect(readFileSync(join(inst, 'examples/infra/network/main.tf'), 'utf8')).toContain('terraform_data');
    const sums = await run('sha256sum', ['-c', '--strict', 'SHA256SUMS'], inst);
    expect(sums.stderr).toBe('');
    expect(sums.code).toBe(0);
    expect(sums.stdout).toMatch(/^node\/bin\/node: OK$/m);
    expect(sums.stdout).toMatch(/^lib\/edge-agent\.mjs: OK$/m);
  });

  it('prints the version in VERSION, from the bundled Node, outside the checkout', async () => {
    const version = readFileSync(join(inst, 'VERSION'), 'utf8').trim();
    const agent = await pkg('edge-agent', ['--version']);
    expect(agent).toMatchObject({ code: 0, stdout: `${version}\n` });
    const relay = await pkg('relay', ['--version']);
    expect(relay).toMatchObject({ code: 0, stdout: `${version}\n` });
  });

  it("runs Node with the launchers' flags and malloc settings; the relay alone exposes gc", async () => {
    const probe = [
      '-e',
      'process.stdout.write(JSON.stringify({ gc: typeof gc, arenas: process.env.MALLOC_ARENA_MAX, mmap: process.env.MALLOC_MMAP_THRESHOLD_ }))',
    ];
    // `-e` after the bundle's path is the program's argument: read the launchers instead, and run their Node
    for (const [program, gc] of [
      ['edge-agent', false],
      ['relay', true],
    ] as const) {
      const launcher = readFileSync(join(inst, 'bin', program), 'utf8');
      const flags = launcher.match(/exec "\$root\/node\/bin\/node" (.*?)\s*"\$root\/lib\//)?.[1] ?? '';
      expect(flags.split(' ')).toEqual(
        expect.arrayContaining(['--max-semi-space-size=1', '--v8-pool-size=1']),
      );
      expect(flags.includes('--expose-gc')).toBe(gc);
      expect(launcher).toMatch(/MALLOC_ARENA_MAX:=2/);
    }
    const wrapped = join(dir, 'env-probe.sh');
    writeFileSync(
      wrapped,
      readFileSync(join(inst, 'bin/relay'), 'utf8')
        .replace(/^here=.*$/m, `here='${join(inst, 'bin')}'`)
        .replace(/"\$root\/lib\/relay\.mjs" "\$@"/, `${probe.map((a) => `'${a}'`).join(' ')}`),
      { mode: 0o755 },
    );
    const r = await new Promise<Ran>((resolve, reject) => {
      const p = spawn(wrapped, [], { cwd: work, env: ENV });
      let stdout = '';
      p.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
      });
      p.on('error', reject);
      p.on('close', (code) => resolve({ code, stdout, stderr: '' }));
    });
    expect(JSON.parse(r.stdout)).toEqual({ gc: 'function', arenas: '2', mmap: '65536' });
  });

  it('refuses another CPU and an older or missing glibc in one line, exit 2, before starting Node', async () => {
    const arch = await pkg('edge-agent', ['--version'], { DRIFTLINE_UNAME_M: 'riscv64' });
    expect(arch.code).toBe(2);
    expect(arch.stdout).toBe('');
    expect(arch.stderr).toMatch(/^driftline-edge: this build is for \w+, this machine is riscv64; [^\n]+\n$/);
    const other = process.arch === 'x64' ? 'aarch64' : 'x86_64';
    const wrong = await pkg('relay', ['--version'], { DRIFTLINE_UNAME_M: other });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(
      new RegExp(
        `^driftline-edge: this build is for \\w+, this machine is ${other}; use the linux-(x64|arm64) tarball\\n$`,
      ),
    );
    const old = await pkg('edge-agent', ['--version'], { DRIFTLINE_GLIBC_VERSION: '2.17' });
    expect(old.code).toBe(2);
    expect(old.stderr).toMatch(
      /^driftline-edge: this build needs glibc 2\.\d+ or newer, this machine has 2\.17; [^\n]+\n$/,
    );
    const own = await pkg('relay', ['--version'], { DRIFTLINE_GLIBC_VERSION: '', DRIFTLINE_UNAME_M: '' });
    // Empty overrides are no overrides: this machine's own answers, which the build accepts.
    expect(own.code).toBe(0);
    const none = await pkg('relay', ['--version'], { DRIFTLINE_GLIBC_VERSION: 'musl' });
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(
      /^driftline-edge: this build needs glibc [\d.]+ or newer and this machine has no glibc[^\n]+\n$/,
    );
  });

  it('checks a config, makes a key, plans with the fake terraform and sends the result through the packaged relay to a hub', {
    timeout: 600_000,
  }, async () => {
    const [hubPort, relayPort] = [await freePort(), await freePort()];
    const hq = join(dir, 'hq');
    mkdirSync(hq);
    const hub = await setUpHub(hq, hubPort, { name: 'ship-lan', sites: ['ship-7'] });

    const relayConfig = join(work, 'relay.yaml');
    writeFileSync(
      relayConfig,
      stringify({
        name: 'ship-lan',
        dataDir: './relay-data',
        listen: { port: relayPort },
        sites: ['ship-7'],
        upstreams: [{ url: hub.url, token: hub.relayToken }],
        forward: { idleMs: 300, pullIntervalMs: 1000, backoffBaseMs: 300, backoffMaxMs: 3000 },
      }),
    );
    const check = await pkg('relay', ['config', 'check', '--config', relayConfig]);
    expect(check.code, check.stderr).toBe(0);
    const added = await pkg('relay', ['token', 'add', 'ship-7', '--config', relayConfig, '--json']);
    expect(added.code, added.stderr).toBe(0);

    const site = join(work, 'ship-7');
    mkdirSync(join(site, 'infra', 'network'), { recursive: true });
    writeFileSync(join(site, 'agent.token'), (JSON.parse(added.stdout) as { token: string }).token);
    writeFileSync(join(site, 'hub.pub'), hub.key);
    const agentConfig = join(site, 'agent.yaml');
    writeFileSync(
      agentConfig,
      stringify({
        site: 'ship-7',
        agent: 'a1',
        dataDir: './agent-data',
        hubPublicKeyFile: './hub.pub',
        upstreams: [{ url: `http://127.0.0.1:${relayPort}`, tokenFile: './agent.token' }],
        // Planned once at start; the schedule does not fire during the test.
        components: [
          { name: 'network', workingDir: './infra/network', environments: ['prod'], schedule: '0 0 1 1 *' },
        ],
        sync: { intervalS: 1, jitterS: 0 },
      }),
    );
    const agentCheck = await pkg('edge-agent', ['config', 'check', '--config', agentConfig]);
    expect(agentCheck.code, agentCheck.stdout + agentCheck.stderr).toBe(0);
    expect(agentCheck.stdout).toContain(join(tools, 'terraform'));
    const init = await pkg('edge-agent', ['init', '--config', agentConfig, '--json']);
    expect(init.code, init.stderr).toBe(0);
    const { enrollment } = JSON.parse(init.stdout) as { enrollment: string };
    await runProgram('hub', ['enroll', '--config', hub.config, enrollment]);

    const plan = await pkg('edge-agent', ['plan', '--config', agentConfig, '--json']);
    expect(plan.code, plan.stderr).toBe(0);
    const [summary] = JSON.parse(plan.stdout) as Array<{ component: string; status: string }>;
    expect(summary).toMatchObject({ component: 'network' });
    expect(['clean', 'changes', 'drift']).toContain(summary?.status);

    hubs.start(BINS.hub, ['run', '--config', hub.config]);
    await waitForHttp(`${hub.url}/v1/health`, 60_000);
    const relay = daemon('relay', ['run', '--config', relayConfig]);
    await waitForHttp(`http://127.0.0.1:${relayPort}/v1/health`, 60_000);
    const agent = daemon('edge-agent', ['run', '--config', agentConfig]);

    const cell = await until(
      'the packaged agent’s first result on the hub’s matrix',
      async () => {
        for (const d of [relay, agent])
          if (d.proc.exitCode !== null) throw new Error(`a packaged daemon stopped:\n${d.log()}`);
        const m = (await (await hub.api('/api/matrix?site=ship-7')).json()) as {
          cells: Array<{ component: string; runId: string | null; status: string }>;
        };
        return m.cells.find((c) => c.component === 'network' && c.runId && c.status !== 'no-data');
      },
      240_000,
      500,
    ).catch((e: Error) => {
      throw new Error(`${e.message}\n--- relay ---\n${relay.log()}\n--- agent ---\n${agent.log()}`);
    });
    expect(cell.runId).toMatch(/^[0-9A-Z]{26}$/);
    const stored = (await (await hub.api(`/api/runs/${cell.runId}`)).json()) as {
      summary: { component: string; environment: string };
    };
    expect(stored.summary).toMatchObject({ component: 'network', environment: 'prod' });
  });
});
