/**
 * The Compose topology (root docker-compose.yml). The file's shape is checked everywhere; bringing it
 * up needs a Docker engine, and where none answers that test is reported as skipped, saying why.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { COMPOSE, composeSpec } from '../src/compose/topology.js';
import { ROOT } from '../src/topology/programs.js';

interface Service {
  image?: string;
  profiles?: string[];
  build?: unknown;
  command?: string[];
  networks?: string[];
  ports?: string[];
  volumes?: string[];
}
const file = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
  networks: Record<string, { internal?: boolean } | null>;
};
const spec = composeSpec();
const arg = (s: Service, flag: string) => s.command?.[s.command.indexOf(flag) + 1];

describe('scripts/docker/up.sh', () => {
  it('prints its usage for --help and refuses an unknown argument, starting nothing (no engine needed)', () => {
    const up = (arg: string) =>
      spawnSync(join(ROOT, 'scripts/docker/up.sh'), [arg], { encoding: 'utf8', timeout: 20_000 });
    const help = up('--help');
    expect([help.status, help.stdout]).toEqual([0, expect.stringContaining('scripts/docker/up.sh down')]);
    expect(help.stdout).toContain('DRIFTLINE_UP_TIMEOUT_S');
    const bad = up('--halp');
    expect([bad.status, bad.stderr.trim()]).toEqual([
      2,
      "up: unknown argument '--halp' (scripts/docker/up.sh [build|down]; --help)",
    ]);
  });
});

describe('docker-compose.yml', () => {
  it('puts each agent alone on an internal network with its link, which also reaches the relay', () => {
    for (const site of spec.sites) {
      const agent = file.services[COMPOSE.agentService(site.site)];
      const link = file.services[COMPOSE.siteLinkService(site.site)];
      expect(agent?.networks).toEqual([`site-${site.site}`]);
      expect(file.networks[`site-${site.site}`]?.internal).toBe(true);
      expect(link?.networks).toEqual(['edge', `site-${site.site}`]);
      expect(arg(link!, '--target')).toBe(`${COMPOSE.relay.service}:${COMPOSE.relay.port}`);
      expect(arg(link!, '--listen')).toBe(`0.0.0.0:${COMPOSE.link.port}`);
    }
    const members = (net: string) =>
      Object.entries(file.services)
        .filter(([, s]) => s.networks?.includes(net))
        .map(([n]) => n)
        .sort();
    expect(members('hq')).toEqual(['hub', COMPOSE.relayLinkService]);
    expect(file.services.relay?.networks).toEqual(['edge']);
  });

  it('runs each link on the profile and time scale of the spec that the set-up step enrols', () => {
    for (const site of spec.sites) {
      const link = file.services[COMPOSE.siteLinkService(site.site)]!;
      expect([arg(link, '--profile'), Number(arg(link, '--time-scale'))]).toEqual([
        site.profile,
        site.timeScale,
      ]);
    }
    const hubLink = file.services[COMPOSE.relayLinkService]!;
    expect(arg(hubLink, '--target')).toBe(`${COMPOSE.hub.service}:${COMPOSE.hub.port}`);
    expect(arg(hubLink, '--profile')).toBe(spec.relayLink.profile);
  });

  it('publishes the dashboard on 127.0.0.1:8080 only, and builds one image once', () => {
    expect(file.services.hub?.ports).toEqual([`127.0.0.1:8080:${COMPOSE.hub.port}`]);
    const demo = Object.entries(file.services).filter(([, s]) => !s.profiles);
    expect(demo.filter(([, s]) => s.build).map(([n]) => n)).toEqual(['setup']);
    for (const [, s] of demo) expect(s.image).toBe('driftline:local');
  });

  it('keeps the PostgreSQL headquarters in the `pg` profile: one more image, published on 127.0.0.1 only', () => {
    const pg = Object.entries(file.services).filter(([, s]) => s.profiles?.includes('pg'));
    expect(pg.map(([n]) => n).sort()).toEqual(['hub-pg-1', 'hub-pg-2', 'hub-pg-init', 'lb', 'postgres']);
    expect(pg.filter(([, s]) => s.build).map(([n]) => n)).toEqual(['postgres']);
    for (const [, s] of pg) expect(['driftline:local', 'driftline-pg:local']).toContain(s.image);
    expect(file.services.lb?.ports).toEqual(['127.0.0.1:8090:8080']);
  });

  it('runs the relay and every agent from the offline package in the image, the hub from source', () => {
    const program = (s: Service | undefined) => s?.command?.find((c) => c.includes('/bin/'));
    expect(program(file.services[COMPOSE.relay.service])).toBe('/opt/driftline-edge/bin/relay');
    for (const site of spec.sites)
      expect(program(file.services[COMPOSE.agentService(site.site)])).toBe(
        '/opt/driftline-edge/bin/edge-agent',
      );
    expect(program(file.services[COMPOSE.hub.service])).toBe('hub/bin/hub.js');
  });
});

// ---- the real thing, where an engine answers

function engine(): { ok: true; compose: string[] } | { ok: false; reason: string } {
  if (process.env.DRIFTLINE_COMPOSE_TEST === '0')
    return { ok: false, reason: 'DRIFTLINE_COMPOSE_TEST=0 turns the Compose test off' };
  const info = spawnSync('docker', ['info', '--format', '{{.ServerVersion}}'], {
    encoding: 'utf8',
    timeout: 20_000,
  });
  if (info.error || info.status !== 0)
    return {
      ok: false,
      reason: `no Docker engine answers ('docker info': ${(info.error?.message ?? info.stderr ?? '').trim().split('\n')[0]}); install docker.io and docker-compose, start dockerd --storage-driver=vfs`,
    };
  if (spawnSync('docker', ['compose', 'version'], { timeout: 20_000 }).status === 0)
    return { ok: true, compose: ['docker', 'compose'] };
  if (spawnSync('docker-compose', ['version'], { timeout: 20_000 }).status === 0)
    return { ok: true, compose: ['docker-compose'] };
  return {
    ok: false,
    reason: "a Docker engine answers but neither 'docker compose' nor 'docker-compose' is installed",
  };
}

const found = engine();
if (!found.ok) console.warn(`compose test SKIPPED: ${found.reason}`);

const PROJECT = 'driftline-test';
const env = { ...process.env, COMPOSE_PROJECT_NAME: PROJECT, COMPOSE_HTTP_TIMEOUT: '600' };

/** Runs a command, keeps its output for the failure message, rejects on a non-zero exit or timeout. */
function run(cmd: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd[0]!, cmd.slice(1), { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d: Buffer) => {
      out += d;
    });
    p.stderr.on('data', (d: Buffer) => {
      out += d;
    });
    const timer = setTimeout(() => p.kill('SIGTERM'), timeoutMs);
    p.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else
        reject(
          new Error(
            `${cmd.join(' ')} ${signal ? `killed after ${timeoutMs} ms` : `exited ${code}`}:\n${out.slice(-4000)}`,
          ),
        );
    });
  });
}

const portFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });

/** The sign-in URL the set-up step printed (`Sign in: …?token=…`), and its token. */
async function signInFromLogs(compose: string[]): Promise<{ url: string; token: string }> {
  // `docker logs` of its container: compose v1's `logs` also watches the project's events, and once never
  // returned in CI (it held up.sh, which now reads the line the same way)
  const ps = await run([...compose, 'ps', '-q', 'setup'], 60_000);
  const id = /^[0-9a-f]{12,64}$/m.exec(ps)?.[0];
  if (!id) throw new Error(`no container for the setup service ('ps -q setup' printed: ${ps.slice(-500)})`);
  const logs = await run(['docker', 'logs', id], 60_000);
  const m = /Sign in: (\S+\?token=(\S+))/.exec(logs);
  if (!m) throw new Error(`the setup service printed no 'Sign in:' line:\n${logs.slice(-2000)}`);
  return { url: m[1]!, token: decodeURIComponent(m[2]!) };
}

/** The sites whose cells have a result on the hub's matrix, or why the hub did not say. */
async function sitesWithResults(token: string): Promise<{ sites: string[]; error?: string }> {
  try {
    const r = await fetch(`${COMPOSE.dashboardUrl}/api/matrix`, {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(20_000),
    });
    if (!r.ok) return { sites: [], error: `/api/matrix answered ${r.status}` };
    const { cells } = (await r.json()) as {
      cells: Array<{ site: string; status: string; receivedAt: string | null }>;
    };
    return {
      sites: [
        ...new Set(cells.filter((c) => c.status !== 'no-data' && c.receivedAt).map((c) => c.site)),
      ].sort(),
    };
  } catch (e) {
    return { sites: [], error: describeError(e) };
  }
}

/** A fetch error with its cause: undici says only "fetch failed" and keeps the reason (ECONNREFUSED, a
 * headers timeout, a reset) in `cause`. */
function describeError(e: unknown): string {
  const err = e as Error & { cause?: { message?: string; code?: string } };
  const cause = err.cause ? ` (${[err.cause.code, err.cause.message].filter(Boolean).join(': ')})` : '';
  return `${err.message}${cause}`;
}

/**
 * Waits (bounded: 30 minutes) for the image build the run's set-up started, when it started one; says how
 * long it waited and how the build ended (its log's last line). Null: none was started.
 */
async function prebuilt(): Promise<{ waitedS: number; last: string } | null> {
  const m = /^(\d+):(.+)$/.exec(process.env.DRIFTLINE_COMPOSE_PREBUILD ?? '');
  if (!m) return null;
  const pid = Number(m[1]);
  const alive = () => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const ended = () => existsSync(`${m[2]}.exit`) || !alive();
  const t = Date.now();
  while (!ended() && Date.now() - t < 30 * 60_000) await new Promise((r) => setTimeout(r, 2000));
  const log = existsSync(m[2]!) ? readFileSync(m[2]!, 'utf8').trim().split('\n') : [];
  return { waitedS: (Date.now() - t) / 1000, last: log.at(-1) ?? '' };
}

describe('the Compose topology', () => {
  it.skipIf(!found.ok)(
    'comes up from docker-compose.yml and the hub shows results from all three sites',
    async () => {
      if (!found.ok) return;
      const compose = found.compose;
      expect(await portFree(8080), '127.0.0.1:8080 is taken; stop what listens there (another `up`?)').toBe(
        true,
      );
      const timings: Record<string, number> = {};
      let t = Date.now();
      try {
        // the images the run's set-up began building (composeImage.setup.ts): waited for, so that up.sh's
        // own build is a cache hit and not a second build beside it
        const waited = await prebuilt();
        if (waited) {
          timings.prebuildWaitS = waited.waitedS;
          console.info(`compose: the run's image build ended (${waited.waitedS} s waited): ${waited.last}`);
        }
        t = Date.now();
        // Base image (pull, or the stand-in), build, up -d, wait for the hub: the script users run. 30
        // minutes: CI's build alone took 406 s beside the suite, creating the containers under vfs (a whole
        // copy of the image each) was still going at 660 s, and up.sh bounds its `up -d` by 20 minutes
        // itself, printing what the set-up step did when it runs out.
        await run([join(ROOT, 'scripts/docker/up.sh')], 30 * 60_000);
        timings.upS = (Date.now() - t) / 1000;
        t = Date.now();
        const signIn = await signInFromLogs(compose);
        const want = spec.sites.map((s) => s.site).sort();
        let seen: string[] = [];
        let lastError: string | undefined;
        const end = Date.now() + 6 * 60_000;
        while (Date.now() < end) {
          const answer = await sitesWithResults(signIn.token);
          seen = answer.sites;
          lastError = answer.error ?? lastError;
          if (want.every((s) => seen.includes(s))) break;
          await new Promise((r) => setTimeout(r, 3000));
        }
        timings.allSitesS = (Date.now() - t) / 1000;
        const dashboard = await fetch(`${COMPOSE.dashboardUrl}/`, {
          signal: AbortSignal.timeout(60_000),
        }).catch((e: unknown) => {
          throw new Error(
            `the dashboard did not answer: ${describeError(e)}; sites with results: [${seen.join(', ')}]` +
              `${lastError ? `; the matrix last failed with: ${lastError}` : ''}`,
          );
        });
        expect(dashboard.status).toBe(200);
        // The printed link signs a browser in: a session cookie and a redirect to the dashboard.
        const link = await fetch(signIn.url, { redirect: 'manual' });
        expect([link.status, link.headers.get('location')]).toEqual([303, '/']);
        expect(link.headers.get('set-cookie')).toContain('driftline_session=');
        expect(
          seen,
          `sites with results after ${timings.allSitesS} s${lastError ? ` (the matrix last failed with: ${lastError})` : ''}`,
        ).toEqual(want);
        console.info(`compose test timings: ${JSON.stringify(timings)}`);
      } catch (e) {
        // What each container is doing (an exited one says how), the hub's and the relay's own logs (the
        // whole project's last lines are mostly the agents'), then everyone's last lines.
        const grab = (args: string[]) => run([...compose, ...args], 60_000).catch((le: Error) => le.message);
        const ps = await grab(['ps']);
        const hub = await grab(['logs', '--tail', '40', 'hub', 'relay']);
        const logs = await grab(['logs', '--tail', '20']);
        throw new Error(
          `${(e as Error).message}\n--- ps ---\n${ps.slice(-3000)}\n--- hub and relay ---\n${hub.slice(-5000)}` +
            `\n--- last logs ---\n${logs.slice(-4000)}`,
        );
      } finally {
        await run([...compose, 'down', '-v', '--remove-orphans'], 5 * 60_000);
      }
    },
    42 * 60_000,
  );
});
