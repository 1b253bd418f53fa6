/**
 * edgeOffline: an agent that cannot reach anyone for weeks, 200 cells re-planned every 15 minutes
 * (synthetic time), recorded the way the daemon records them (app.ts): through the agent's RecordBatcher
 * (group commit within `sync.recordWindowS`, flushed when no other plan is running) into the real
 * AgentLedger over SQLite (synchronous=FULL, Automerge, epochs, queue bound), the detail packed only when it is
 * stored. Plans finish one synthetic second apart. Reports results recorded, peak RSS of this process,
 * disk used, and the p99 time to load the current document epoch (sampled along the way, in a child
 * process: a load here would grow this process's WebAssembly memory, counted as the agent's). Bounded in
 * time: when the bound is hit, `results` says how many were actually measured (nothing is extrapolated).
 *
 * Before the loop it starts the real daemon (`edge-agent run`, no schedule, no plan on start, upstream
 * unreachable) and reports its idle RSS before any plan, with where that memory goes (V8 heap, external
 * and array buffers, which hold Automerge's wasm bytes, file-backed pages: Node's own code and data).
 *
 * `--packaged` runs all of it on the offline package (docs/decisions/110-packaging.md): the tarball
 * (`DRIFTLINE_PACKAGE`, else built now) is unpacked, this file is bundled into its `lib/` like the
 * programs, and run by the package's Node with its launcher's flags and malloc settings; the idle daemon
 * is `bin/edge-agent`.
 */
import { fork, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as A from '@automerge/automerge';
import { AgentConfigSchema, openSqliteLedger, packDetail, RecordBatcher } from '@driftline/edge-agent';
import { generateSigningKeyPair, publicKeyToText, type Sha256 } from '@driftline/protocol';
import { AGENT, agentStore, emit, isQuick, log, newRunId, SITE, tmp } from '../lib/agent.js';
import { liveCycleStates, type RealPlan, realPlan } from '../lib/plans.js';

const CELLS = 200;
const DAYS = isQuick ? 0.5 : 30;
const CYCLES = Math.round((DAYS * 86_400_000) / (15 * 60_000));
const TIME_BOUND_MS = isQuick ? 60_000 : 40 * 60_000;
const SAMPLE_EVERY = isQuick ? 100 : 1000;

const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
/** The unpacked package this copy runs from (set by the `--packaged` wrapper), else undefined. */
const inPackage = arg('--in-package');

async function measure(): Promise<void> {
  const idle = await idleDaemon(inPackage);
  log('edgeOffline', 'idle daemon before its first plan', idle);
  let now = Date.parse('2026-07-01T00:00:00Z');
  const clock = () => now;
  const store = agentStore(clock);
  const ids = newRunId(clock);
  const comps = Array.from({ length: CELLS }, (_, i) => `component-${String(i).padStart(3, '0')}`);
  const cadenceS = Object.fromEntries(comps.map((c) => [`prod/${c}`, 900]));
  const STATE_CYCLES = Math.min(CYCLES, 4000);
  /**
   * The sequence `cycleStates(CELLS, STATE_CYCLES, 11)` returns, one cycle at a time and repeating after
   * STATE_CYCLES as before: the whole table for 2,880 cycles took 26 MB of this process's heap (41 MB of
   * RSS), which was counted as the agent's.
   */
  function* statesByCycle() {
    for (;;) yield* liveCycleStates(CELLS, STATE_CYCLES, 11);
  }
  const states = statesByCycle();
  // A few real plans (fake terraform, the agent's summariser) stand for every component's plan; the
  // component name and plan hash make each one distinct, as they are at a real site.
  const base = new Map<string, RealPlan>();
  const planOf = (
    comp: string,
    state: 'clean' | 'changes' | 'drift',
    variant: number,
  ): Omit<RealPlan, 'canonical'> & { canonical: () => string } => {
    const k = `${state}/${variant}`;
    let p = base.get(k);
    if (!p) {
      p = realPlan('component-x', state, variant, now, 4);
      base.set(k, p);
    }
    const planHash = createHash('sha256').update(`${comp}/${k}`).digest('hex') as Sha256;
    return {
      ...p,
      component: comp,
      summary: { ...p.summary, component: comp, planHash, finishedAt: new Date(now).toISOString() },
      canonical: () => (p as RealPlan).canonical.replaceAll('component-x', comp),
    };
  };

  // The daemon's batcher, its timers on the synthetic clock.
  const timers: Array<{ at: number; fn: () => void; cancelled: boolean }> = [];
  const fireDue = () => {
    for (const t of timers.splice(0)) {
      if (t.cancelled) continue;
      if (t.at <= now) t.fn();
      else timers.push(t);
    }
  };
  const batcher = new RecordBatcher({
    recordMany: (inputs) => store.recordMany(inputs),
    setTimer: (ms, fn) => {
      const t = { at: now + ms, fn, cancelled: false };
      timers.push(t);
      return () => {
        t.cancelled = true;
      };
    },
    windowMs: AgentConfigSchema.shape.sync.parse(undefined).recordWindowS * 1000,
    maxBatch: 256,
    // As in app.ts: after a tick's last plan nothing else is running, so it commits at once.
    moreComing: () => !lastOfTick,
  });
  let lastOfTick = false;

  const loads: number[] = [];
  const sampler = loadSampler(store.storage.location);
  const t0 = performance.now();
  let results = 0;
  let unchanged = 0;
  let truncated = false;
  for (let cycle = 0; cycle < CYCLES; cycle++) {
    const cs = states.next().value!;
    const committed: Array<Promise<{ unchanged: boolean }>> = [];
    for (const [i, comp] of comps.entries()) {
      now += 1000;
      fireDue();
      lastOfTick = i === comps.length - 1;
      const p = planOf(comp, cs[i]!.state, cs[i]!.variant);
      committed.push(
        batcher.record({
          runId: ids(),
          summary: p.summary,
          detail: () => packDetail(p.canonical()),
          facts: { version: '0.1.0', cadenceS, contactIntervalS: 900 },
        }),
      );
      results++;
      if (results % SAMPLE_EVERY === 0) {
        loads.push(await sampler.load(store.currentEpoch()));
        if (performance.now() - t0 > TIME_BOUND_MS) {
          batcher.flush(); // commits the cycle's results still waiting for their window
          truncated = true;
          break;
        }
      }
    }
    for (const r of await Promise.all(committed)) if (r.unchanged) unchanged++;
    if (truncated) break;
    now += 15 * 60_000 - CELLS * 1000;
  }
  const ms = performance.now() - t0;
  const sorted = [...loads].sort((a, b) => a - b);
  const p99 = sorted.length
    ? sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)]!
    : null;
  // The agent's peak: read before `status()`, which measures every unsent epoch (the daemon never calls
  // it; `edge-agent status` does, in a process of its own).
  const peakMb = Math.round(process.resourceUsage().maxRSS / 1024);
  const st = store.status();
  const dir = store.storage.location.replace(/\/agent\.sqlite$/, '');
  const size = (f: string) => {
    try {
      return statSync(join(dir, f)).size;
    } catch {
      return 0;
    }
  };
  const diskBytes = size('agent.sqlite') + size('agent.sqlite-wal') + size('agent.sqlite-shm');
  log('edgeOffline', truncated ? 'time bound reached: results are what was measured' : 'done', {
    planned: CYCLES * CELLS,
    results,
    unchanged,
    msPerResult: +(ms / results).toFixed(2),
    epoch: st.epoch,
    unackedRuns: st.unackedRuns,
    queueBytes: st.queueBytes,
    droppedBlobs: st.dropped.blobs,
    loadSamples: loads.length,
    ...store.stats(),
  });
  sampler.stop();
  const memory = memoryNow();
  log('edgeOffline', 'this process after the loop', memory);
  emit({
    results,
    rssMb: peakMb,
    idleRssMb: idle.rssMb,
    diskMb: +(diskBytes / 1048576).toFixed(1),
    docLoadP99Ms: p99 === null ? null : +p99.toFixed(1),
    packaged: inPackage !== undefined,
    memory: { loop: memory, idleDaemon: idle },
  });
  store.close();
}

/**
 * Times loading an epoch the way a restarted agent loads its current one, in a child process of its
 * own: Automerge's WebAssembly memory grows to the largest document it held and never shrinks, so a
 * second copy loaded here would be counted in the agent's peak (by ~35 MB) though the agent never
 * holds one.
 */
function loadSampler(path: string): { load(epoch: number): Promise<number>; stop(): void } {
  const child = fork(process.argv[1] as string, ['--load-sampler', path], {
    execArgv: process.execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let waiting: { resolve(ms: number): void; reject(e: Error): void } | undefined;
  child.on('message', (m) => waiting?.resolve((m as { ms: number }).ms));
  child.on('exit', (code) => waiting?.reject(new Error(`the load sampler exited ${code}`)));
  return {
    load: (epoch) =>
      new Promise((resolve, reject) => {
        waiting = { resolve, reject };
        child.send({ epoch });
      }),
    stop: () => child.disconnect(),
  };
}

/** The child of `loadSampler`: the agent's file opened as `edge-agent status` opens it, one load per message. */
function runLoadSampler(path: string): void {
  const { ledger } = openSqliteLedger({ path, site: SITE, agent: AGENT });
  A.free(A.init()); // Automerge compiled before the first timed load (the package compiles it at first use)
  process.on('message', (m: { epoch: number }) => {
    const s = performance.now();
    const doc = ledger.loadEpoch(m.epoch);
    const ms = performance.now() - s;
    A.free(doc); // the caller owns a loaded document
    process.send?.({ ms });
  });
  process.once('disconnect', () => ledger.close());
}

const mb = (bytes: number) => +(bytes / 1048576).toFixed(1);

/** Where this process's memory is: V8 heap, external and array buffers, anonymous and file-backed RSS. */
function memoryNow(): Record<string, number> {
  const m = process.memoryUsage();
  const status = readFileSync('/proc/self/status', 'utf8');
  const kb = (k: string) => Number(status.match(new RegExp(`${k}:\\s+(\\d+) kB`))?.[1] ?? 0) * 1024;
  return {
    rssMb: mb(m.rss),
    heapUsedMb: mb(m.heapUsed),
    heapTotalMb: mb(m.heapTotal),
    externalMb: mb(m.external),
    arrayBuffersMb: mb(m.arrayBuffers),
    rssAnonMb: mb(kb('RssAnon')),
    rssFileMb: mb(kb('RssFile')),
  };
}

/**
 * Starts `edge-agent run` (the package's launcher, or the source bin under tsx) on a config with one
 * cell, no schedule, no plan on start and an upstream that refuses connections; once it has logged
 * `agent started` and settled, reads its RSS and asks it (SIGUSR2, through a `--require`d probe) for
 * its heap figures, then stops it.
 */
async function idleDaemon(pkg: string | undefined): Promise<Record<string, number | null>> {
  const dir = tmp('idle');
  mkdirSync(join(dir, 'infra/network'), { recursive: true });
  writeFileSync(
    join(dir, 'hub.pub'),
    `${await publicKeyToText((await generateSigningKeyPair()).publicKey)}\n`,
  );
  writeFileSync(join(dir, 'agent.token'), 'not-a-real-token\n');
  const config = join(dir, 'agent.yaml');
  writeFileSync(
    config,
    [
      'site: ship-7',
      'agent: a1',
      'dataDir: ./agent-data',
      'hubPublicKeyFile: ./hub.pub',
      'upstreams: [{ url: "http://127.0.0.1:9", tokenFile: ./agent.token }]',
      'components: [{ name: network, workingDir: ./infra/network, environments: [prod] }]',
      'sync: { planOnStart: false }',
    ].join('\n'),
  );
  const probe = join(dir, 'probe.cjs');
  writeFileSync(
    probe,
    `process.on('SIGUSR2', () => { const m = process.memoryUsage(); process.stderr.write('MEMORY ' + JSON.stringify(m) + '\\n'); });\n`,
  );
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const cmd = pkg
    ? { file: join(pkg, 'bin/edge-agent'), pre: [] as string[] }
    : { file: process.execPath, pre: [join(root, 'edge-agent/bin/edge-agent.js')] };
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'info' };
  delete env.NODE_OPTIONS;
  const init = spawnSync(cmd.file, [...cmd.pre, 'init', '--config', config], {
    cwd: dir,
    env,
    encoding: 'utf8',
  });
  if (init.status !== 0) throw new Error(`edge-agent init failed: ${init.stderr}`);
  const p = spawn(cmd.file, [...cmd.pre, 'run', '--no-schedule', '--config', config], {
    cwd: dir,
    env: { ...env, NODE_OPTIONS: `--require ${probe}` },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  p.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const waitFor = async (what: RegExp, ms: number) => {
    for (const end = Date.now() + ms; !what.test(err); await new Promise((r) => setTimeout(r, 100)))
      if (Date.now() > end || p.exitCode !== null)
        throw new Error(`edge-agent run: no ${what} within ${ms} ms:\n${err}`);
  };
  try {
    await waitFor(/"msg":"agent started"/, 120_000);
    // Its first (failing) pushes, then quiet: V8's memory reducer shrinks the heap ~8 s after start-up
    // stops allocating (at 5 s the figure still held ~5 MB of start-up garbage).
    await new Promise((r) => setTimeout(r, 15_000));
    const status = readFileSync(`/proc/${p.pid}/status`, 'utf8');
    const kb = (k: string) => Number(status.match(new RegExp(`${k}:\\s+(\\d+) kB`))?.[1] ?? 0) * 1024;
    p.kill('SIGUSR2');
    await waitFor(/MEMORY \{/, 10_000);
    const m = JSON.parse(err.match(/MEMORY (\{.*\})/)![1]!) as NodeJS.MemoryUsage;
    return {
      rssMb: mb(kb('VmRSS')),
      peakMb: mb(kb('VmHWM')),
      rssAnonMb: mb(kb('RssAnon')),
      rssFileMb: mb(kb('RssFile')),
      heapUsedMb: mb(m.heapUsed),
      heapTotalMb: mb(m.heapTotal),
      externalMb: mb(m.external),
      arrayBuffersMb: mb(m.arrayBuffers),
    };
  } finally {
    if (p.exitCode === null) {
      const done = new Promise((r) => p.once('exit', r));
      p.kill('SIGTERM');
      await done;
    }
  }
}

/**
 * `--packaged`: unpacks the offline package, bundles this file into its `lib/`, runs that copy on the
 * package's Node with the launcher's flags, and passes its result on with the copy's peak RSS.
 */
async function runPackaged(): Promise<void> {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  // Computed specifiers: the bundled copy of this file must not pull esbuild in.
  const scripts = (f: string) => pathToFileURL(join(root, 'scripts/package', f)).href;
  const build = (await import(scripts('build.ts'))) as typeof import('../../scripts/package/build.js');
  const bundle = (await import(scripts('bundle.ts'))) as typeof import('../../scripts/package/bundle.js');
  const { TARGETS } = (await import(
    scripts('platform.ts')
  )) as typeof import('../../scripts/package/platform.js');
  let tarball = process.env.DRIFTLINE_PACKAGE;
  if (!tarball) {
    const target = TARGETS.find((t) => t.nodeArch === process.arch);
    if (!target) throw new Error(`no package target for ${process.arch}`);
    tarball = (await build.buildPackage(target, tmp('package'))).tarball;
  }
  const inst = tmp('installed');
  const untar = spawnSync('tar', ['xzf', tarball], { cwd: inst, encoding: 'utf8' });
  if (untar.status !== 0) throw new Error(`tar xzf ${tarball}: ${untar.stderr}`);
  const self = join(inst, 'lib/bench-edgeOffline.mjs');
  await bundle.bundleEntry(root, 'bench/parts/edgeOffline.ts', self);
  // The flags the launcher passes Node, read from the launcher itself.
  const launcher = readFileSync(join(inst, 'bin/edge-agent'), 'utf8');
  const flags =
    launcher
      .match(/exec "\$root\/node\/bin\/node" (.*?)\s*"\$root\/lib\//)?.[1]
      ?.split(/\s+/)
      .filter(Boolean) ?? [];
  // And the malloc settings it exports (`: "${NAME:=value}"`), unless this environment sets them.
  const launcherEnv = Object.fromEntries(
    [...launcher.matchAll(/"\$\{(\w+):=([^}]*)\}"/g)].map((m) => [m[1]!, process.env[m[1]!] ?? m[2]!]),
  );
  log('edgeOffline', 'running on the package', {
    tarball,
    node: join(inst, 'node/bin/node'),
    flags,
    env: launcherEnv,
  });
  const child = spawn(
    join(inst, 'node/bin/node'),
    [...flags, self, '--in-package', inst, ...(isQuick ? ['--quick'] : [])],
    {
      cwd: inst,
      env: { ...process.env, ...launcherEnv },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  let peak = 0;
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const poll = setInterval(() => {
    try {
      const m = readFileSync(`/proc/${child.pid}/status`, 'utf8').match(/VmHWM:\s+(\d+) kB/);
      if (m) peak = Math.max(peak, Math.round(Number(m[1]) / 1024));
    } catch {}
  }, 100);
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  clearInterval(poll);
  rmSync(inst, { recursive: true, force: true });
  if (!process.env.DRIFTLINE_PACKAGE) rmSync(dirname(tarball), { recursive: true, force: true });
  if (code !== 0) throw new Error(`the packaged edgeOffline exited ${code}`);
  const line = out
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .at(-1);
  if (!line) throw new Error('the packaged edgeOffline printed no JSON');
  const r = JSON.parse(line) as Record<string, unknown>;
  // The copy's own peak, read before its final `status()`; polled VmHWM when it printed none.
  emit({ ...r, rssMb: r.rssMb ?? peak });
}

// Last: everything above (the helpers' constants included) is initialised by now.
const samplerPath = arg('--load-sampler');
if (samplerPath) runLoadSampler(samplerPath);
else if (process.argv.includes('--packaged') && !inPackage) await runPackaged();
else await measure();
