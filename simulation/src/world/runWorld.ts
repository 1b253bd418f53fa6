import { join } from 'node:path';
import { seededRandom } from '../core/rng.js';
import { Canaries } from './canaries.js';
import { ClockFaults, clockInvariants } from './clockFaults.js';
import { ControlWatch } from './controlWatch.js';
import { CredentialFaults } from './credentialFaults.js';
import { DiskFaults, diskInvariants, RELAY_MAX_BYTES } from './diskFaults.js';
import { type FleetFigures, FleetWatch } from './fleetFigures.js';
import { HostileFaults, hostileInvariants } from './hostileFaults.js';
import type { Invariant } from './invariant.js';
import { OverdueWatch } from './overdueWatch.js';
import type { Topology } from './topologyFile.js';
import {
  RELAY,
  REVOCATION_CHECK_MS,
  siteName,
  WORLD_COMPONENTS,
  WORLD_START,
  World,
  type WorldSpec,
} from './World.js';
import type { LedgerFigures } from './WorldLedger.js';

const HOUR = 3_600_000;
/** Longest the world runs with every link up, after its days, for what is in flight to arrive. */
const DRAIN_MS = 12 * HOUR;
/** With `crash`: each node goes down on average once in this long (exponential gaps), ms. */
const CRASH_EVERY_MS = 48 * HOUR;
/** With `crash`: a node stays down 1 to 60 minutes. */
const DOWN_MS = { min: 60_000, max: 60 * 60_000 };

/** The faults a world run may be given (`--faults`), and what each does. */
export const WORLD_FAULTS = {
  links:
    'each exchange on a site link: 2 % reset before the relay sees it, 2 % answer lost after it acted, 2 % delivered twice; 0–30 s jitter',
  crash:
    'each node (hub, relay, every agent) goes down without warning about once in 2 days, exchanges under way with it cut both ways, and starts again from its files 1–60 min later',
  disk: "about once a day the relay's blob folder is deleted as it runs (the next time it takes a detail blob), and its disk is full for 10 min–3 h (something else fills its storage.maxBytes; a write that would grow its store is refused 507)",
  clock:
    "each agent's clock goes wrong about twice a day: stepped 5 min–6 h either way or skewed 1–20 ms a second, for 30 min–6 h, then set right",
  hostile:
    'relay-1 lies to the sites in episodes of 2–5 h (honest 1–3 h between, longer until a site is in contact for an hour, and after the days), one lie at a time in a shuffled order: flipped bytes, fake tus completion, altered downlink copies, fake receipts and custody, swapped payloads, silent drops; odd sites speak hop v1, the others v2',
  creds:
    "about once a day a site's token at relay-1 is stolen: revoked there, a new one written to the agent's token file 10 min–3 h later, and a thief keeps pulling the site's downlink with the old one every 15 min",
} as const;
export type WorldFault = keyof typeof WORLD_FAULTS;

export interface WorldRunOptions {
  seed: number;
  /** Sites of the uniform world; with `topology`, its sites' number. */
  sites: number;
  days: number;
  faults: readonly WorldFault[];
  /** A topology file's fleet (`--topology`, `topologyFile.ts`) instead of the uniform sites. */
  topology?: Topology;
}

export interface WorldReport {
  seed: number;
  sites: number;
  days: number;
  faults: readonly WorldFault[];
  figures: LedgerFigures;
  /** The hub's ages per site and each link's bytes per day, over the days (`fleetFigures.ts`). */
  fleet: FleetFigures;
  /** The topology file run, if any: as given, its contents' sha256 (16 hex), its description. */
  topology: { file: string; sha256: string; description: string | null } | null;
  network: Record<string, number>;
  /** Virtual time from the end of the days until every run recorded by then had arrived, ms; null: not within the drain. */
  drainedInMs: number | null;
  steps: number;
  invariants: Invariant[];
  held: boolean;
  digest: string;
  /** The thread pool was one thread: the digest replays on any machine (docs/decisions/540-deterministic-world.md). */
  replayable: boolean;
  wallMs: number;
  replay: string;
}

export function worldSpec(o: WorldRunOptions): WorldSpec {
  const links = o.faults.includes('links');
  return {
    seed: o.seed,
    sites: o.topology ? o.topology.spec.siteSpecs.length : o.sites,
    ...o.topology?.spec,
    ...(links
      ? { faults: { lossRate: 0.02, answerLossRate: 0.02, duplicateRate: 0.02 }, jitterMs: 30_000 }
      : {}),
    ...(o.faults.includes('disk') ? { relayMaxBytes: RELAY_MAX_BYTES } : {}),
    // documents sealed and pruned within a day (2,000 changes by default: weeks of a world's site), so the
    // prunes' invariant judges prunes; a topology file's fleet keeps its own settings (its bytes are figures)
    ...(o.topology ? {} : { agentSync: { maxDocChanges: 100 } }),
    // ages have a stated uncertainty only through a relay the hub knows the key of (decision 415)
    ...(o.faults.includes('clock') ? { keyedRelay: true } : {}),
  };
}

/** Runs one world: its days, then every link up until what was recorded has arrived; checks the invariants. */
export async function runWorld(o: WorldRunOptions): Promise<WorldReport> {
  const started = process.hrtime.bigint();
  const clock = o.faults.includes('clock')
    ? ClockFaults.drawn(o.seed, sitesOf(o), o.days * 24 * HOUR, WORLD_START, (i) =>
        o.topology ? (o.topology.spec.siteSpecs[i]?.name ?? siteName(i)) : siteName(i),
      )
    : null;
  const hostile = o.faults.includes('hostile')
    ? new HostileFaults(o.seed, sitesOf(o), o.days * 24 * HOUR)
    : null;
  let creds: CredentialFaults | null = null;
  const hostileSpec = hostile?.spec();
  const world = new World({
    ...worldSpec(o),
    ...(clock ? { agentNow: (s: string) => clock.now(s) } : {}),
    ...hostileSpec,
    // the credentials' judge sees relay-1's own answers, inside any lying hop in front of it
    ...(o.faults.includes('creds')
      ? {
          relayFront: (relay) => {
            const judged = creds ? creds.front(relay) : relay;
            return hostileSpec?.relayFront ? hostileSpec.relayFront(judged) : judged;
          },
        }
      : {}),
  });
  if (o.faults.includes('creds')) creds = new CredentialFaults(world, REVOCATION_CHECK_MS);
  clock?.watch(world);
  const fleet = new FleetWatch(world);
  const canaries = new Canaries(WORLD_COMPONENTS);
  canaries.watch(world);
  const disk = o.faults.includes('disk') ? new DiskFaults(world) : null;
  const control = new ControlWatch(world);
  const overdue = new OverdueWatch(world);
  try {
    await world.start();
    if (o.faults.includes('crash')) scheduleCrashes(world, o);
    disk?.schedule(o.seed, o.days * 24 * HOUR);
    hostile?.schedule(world);
    creds?.schedule(
      o.seed,
      world.sites.map((s) => s.name),
      o.days * 24 * HOUR,
    );
    // a topology file's run shows the fleet's ages under its own schedules: no operator's requests in them
    if (!o.topology) control.schedule(o.seed, o.days);
    overdue.schedule(o.days * 24 * HOUR);
    await world.run(o.days * 24 * HOUR);
    disk?.disarm();
    const end = Date.now();
    fleet.endOfDays(o.days);
    world.openAllLinks();
    const drained = await world.until(() => world.ledger.figures(end).lost === 0, DRAIN_MS);
    const drainedInMs = drained ? Date.now() - end : null;
    const diskDrained = disk ? await disk.drain(DRAIN_MS) : true;
    await hostile?.drain(world, end, DRAIN_MS);
    await clock?.settled();
    const figures = world.ledger.figures(end);
    canaries.scanFiles('the hub', join(world.root, 'hub'));
    canaries.scanFiles(RELAY, join(world.root, RELAY));
    const lost = world.sites.flatMap((s) => world.ledger.lostOf(s.name).map((l) => `${s.name} ${l}`));
    const invariants: Invariant[] = [
      {
        name: 'nothing lost',
        held: figures.lost === 0,
        detail:
          figures.lost === 0
            ? `${figures.recorded} runs recorded by the end of day ${o.days}, every one at the hub ${Math.round((drainedInMs ?? 0) / 60_000)} min after the links came up`
            : `${figures.lost} of ${figures.recorded} never reached the hub: ${lost.slice(0, 5).join('; ')}`,
      },
      {
        name: 'nothing made up',
        held: figures.unknown === 0,
        detail: `${figures.unknown} runs at the hub that no agent of their site recorded`,
      },
      {
        name: 'every ack an agent took covered runs the hub held (checked at each write)',
        held: world.ledger.acks.uncovered === 0 && world.ledger.acks.taken > 0,
        detail:
          world.ledger.acks.uncovered === 0
            ? `${world.ledger.acks.taken} runs acknowledged at the agents, each at the hub when its ack was written`
            : `${world.ledger.acks.uncovered} of ${world.ledger.acks.taken} acknowledged before the hub held them: ${world.ledger.acks.first.slice(0, 3).join('; ')}`,
      },
      {
        name: 'every prune covered runs the hub held (checked at each write)',
        held: world.ledger.prunes.uncovered === 0,
        detail:
          world.ledger.prunes.uncovered === 0
            ? `${world.ledger.prunes.epochs} epochs pruned at the agents (${world.ledger.prunes.runs} runs in them), each run at the hub when its prune was written`
            : `${world.ledger.prunes.uncovered} runs pruned before the hub held them: ${world.ledger.prunes.first.slice(0, 3).join('; ')}`,
      },
      ...(o.faults.includes('crash')
        ? [
            {
              name: 'every crashed node came back',
              held: world.crashes.count > 0 && world.crashes.failed.length === 0,
              detail:
                world.crashes.failed.length === 0
                  ? `${world.crashes.count} crashes, each node up again from its files`
                  : `${world.crashes.failed.length} of ${world.crashes.count} did not come back: ${world.crashes.failed.slice(0, 3).join('; ')}`,
            },
          ]
        : []),
      ...(disk ? diskInvariants(disk, diskDrained) : []),
      ...(hostile ? await hostileInvariants(hostile, world, end, world.ledger.figures(end).lost) : []),
      ...(clock ? clockInvariants(clock, end) : []),
      ...(creds ? creds.invariants() : []),
      canaries.invariant(),
      // the bound holds where nothing loses, delays or misdates on purpose
      ...(o.topology ? [] : await control.invariants(o.faults.length === 0, end)),
      ...overdue.invariants(o.faults.length === 0),
      {
        name: 'runs recorded',
        held: figures.recorded > 0,
        detail: `${figures.recorded} runs (a world whose agents plan nothing proves nothing)`,
      },
    ];
    const held = invariants.every((i) => i.held);
    return {
      seed: o.seed,
      sites: sitesOf(o),
      days: o.days,
      faults: o.faults,
      figures,
      fleet: fleet.figures(end),
      topology: o.topology
        ? { file: o.topology.file, sha256: o.topology.sha256, description: o.topology.description }
        : null,
      network: { ...world.net.counts },
      drainedInMs,
      steps: world.time.steps,
      invariants,
      held,
      digest: world.digest(),
      replayable: process.env.UV_THREADPOOL_SIZE === '1',
      wallMs: Math.round(Number(process.hrtime.bigint() - started) / 1e6),
      replay: replayCommand(o),
    };
  } finally {
    await world.close();
  }
}

/**
 * The `crash` fault's schedule, drawn from the seed before the days begin: for each node, gaps with a mean
 * of {@link CRASH_EVERY_MS}, each crash a world timer (docs/decisions/540-deterministic-world.md).
 */
function scheduleCrashes(world: World, o: WorldRunOptions): void {
  const random = seededRandom(`${o.seed}:crash`);
  const daysMs = o.days * 24 * HOUR;
  for (const node of ['hub', RELAY, ...world.sites.map((s) => s.name)]) {
    let at = 0;
    for (;;) {
      at += Math.ceil(-Math.log(1 - random()) * CRASH_EVERY_MS);
      if (at >= daysMs) break;
      const down = DOWN_MS.min + Math.floor(random() * (DOWN_MS.max - DOWN_MS.min));
      setTimeout(() => void world.crash(node, down), at);
    }
  }
}

export function replayCommand(o: WorldRunOptions): string {
  const faults = o.faults.length > 0 ? ` --faults ${o.faults.join(',')}` : '';
  const where = o.topology ? `--topology ${o.topology.file}` : `--sites ${o.sites}`;
  return `npm run sim -- --seed ${o.seed} ${where} --days ${o.days}${faults}`;
}

const sitesOf = (o: WorldRunOptions) => (o.topology ? o.topology.spec.siteSpecs.length : o.sites);
