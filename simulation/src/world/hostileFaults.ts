import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import inject from 'light-my-request';
import pino, { type Logger } from 'pino';
import { seededRandom } from '../core/rng.js';
import {
  cleanHeaders,
  type HopRequest,
  type HopResponse,
  type HostileHandler,
  hostileHandler,
} from './hostile/hostileHandler.js';
import { LIE_NAMES, type Lie, type LieName, lieFits, makeLie } from './hostile/lies.js';
import { RELAY, type World, type WorldSpec } from './World.js';
import type { WorldLink } from './WorldLink.js';
import type { Dispatch } from './WorldNetwork.js';

const MIN = 60_000;
const HOUR = 60 * MIN;

/** How long an episode of lies lasts, and the honest stretch before each, ms (drawn uniformly). */
export interface HostileSchedule {
  episodeMs: { min: number; max: number };
  honestMs: { min: number; max: number };
}

/** `npm run sim`'s: lies for 2 to 5 hours, honest for 1 to 3 hours before each. */
export const HOSTILE_SCHEDULE: HostileSchedule = {
  episodeMs: { min: 2 * HOUR, max: 5 * HOUR },
  honestMs: { min: 1 * HOUR, max: 3 * HOUR },
};
/** An episode whose lie has touched nothing by its end (no site it can lie to was in contact) goes on this much longer, again and again, until the days end. */
const EXTEND_MS = 30 * MIN;
/**
 * An episode begins only where a site's link is up this long on end (or for a whole window, where windows
 * are shorter): long enough for a push, its custody and the hub's acks to go round a link of minutes each
 * way. A lie begun where no site is in contact, near the days' end, touches nothing and cannot be extended.
 */
const CONTACT_MS = 1 * HOUR;

/** One episode: a lie told from `from` to `to` (world ms since the start), what it did and what it met. */
export interface Episode {
  lie: LieName;
  from: number;
  to: number;
  /** What the lie did, by part; filled in as it ends. */
  did: Record<string, number>;
  /** Requests it altered and passed on to relay-1, by relay-1's answer status. */
  forwarded: Record<string, number>;
  /** Uploads it answered as complete (by the blob's sha256): each must still reach the hub. */
  fakedBlobs: string[];
  /** The nodes' logged refusals from its start to the next episode's, by message. */
  refusals: Record<string, number>;
}

/** What a node logs when it refuses what a hop forged (hub, relay and agent messages, decisions 220, 495). */
const REFUSAL = /refus|reject|not signed|do not hash|does not match|mismatch/i;

/**
 * The `hostile` fault (docs/decisions/540-deterministic-world.md): relay-1 lies to the sites. Its listener
 * gets a hostile hop in front (`World`'s `relayFront`, each life of the relay), the hostile suite's own
 * (`hostileHandler`), which tells one lie at a time in episodes drawn from `${seed}:hostile` — the lies of
 * `lies.ts` in a shuffled order, round and round, each begun where a site is in contact ({@link CONTACT_MS})
 * and told for a drawn length and, if it has touched nothing by then (the sites it can lie to were out of
 * contact), {@link EXTEND_MS} longer at a time — and is honest between them and after the days. The draws
 * are made as the world reaches them, so they hang on what the world did, which its seed decides. Odd
 * sites (site-002, site-004, …) speak hop v1, the others v2.
 *
 * It keeps what each episode did (the attacks' own counts), what relay-1 answered to the requests it
 * altered and passed on, the uploads it faked, and the refusals the nodes logged; and it reads, after the
 * drain, whether what the hub holds is what the agents recorded: each run's cell, status and detail, and
 * each detail's bytes against its name.
 */
export class HostileFaults {
  readonly episodes: Episode[] = [];
  /** Odd sites speak hop v1. */
  readonly wires: (1 | 2)[];
  private readonly hop: HostileHandler;
  private relay: Dispatch | null = null;
  private current: Episode | null = null;
  private logging: Episode | null = null;
  private readonly forged = new WeakSet<HopRequest>();
  private readonly random;
  private readonly order: LieName[];
  private told = 0;
  /** The sites' links, whose contact windows an episode waits for. */
  private links: WorldLink[] = [];
  private started = 0;
  /** Each run the hub committed, as it committed it (first time). */
  private readonly hubRuns = new Map<
    string,
    { site: string; component: string; environment: string; status: string; detailBlob: string | null }
  >();

  constructor(
    seed: number,
    sites: number,
    readonly daysMs: number,
    private readonly timing: HostileSchedule = HOSTILE_SCHEDULE,
  ) {
    this.wires = Array.from({ length: sites }, (_, i) => (i % 2 === 1 ? 1 : 2));
    this.random = seededRandom(`${seed}:hostile`);
    const order: LieName[] = LIE_NAMES.filter((n) => lieFits(n, this.wires));
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(this.random() * (i + 1));
      [order[i], order[j]] = [order[j] as LieName, order[i] as LieName];
    }
    this.order = order;
    this.hop = hostileHandler((req) => this.forward(req));
  }

  private draw(r: { min: number; max: number }): number {
    return Math.round(r.min + this.random() * (r.max - r.min));
  }

  /** World ms since {@link schedule}. */
  private get elapsed(): number {
    return Date.now() - this.started;
  }

  /** What the world needs for this fault: the hop in front of relay-1, wires per site, a logger that counts refusals. */
  spec(): Pick<WorldSpec, 'relayFront' | 'siteSync' | 'logger'> {
    return {
      relayFront: (relay) => {
        this.relay = relay;
        return this.hop.handle;
      },
      siteSync: (site) => ({ wire: this.wires[Number(site.slice(-3)) - 1] ?? 2 }),
      logger: this.logger(),
    };
  }

  /** Starts the episodes (the first after an honest stretch) on the world's timers and watches the hub's commits. */
  schedule(world: World): void {
    this.started = Date.now();
    this.links = world.sites.map((s) => s.link);
    world.hubCommits.add((c) => {
      for (const r of c.runs)
        if (!this.hubRuns.has(r.runId))
          this.hubRuns.set(r.runId, {
            site: r.site,
            component: r.component,
            environment: r.environment,
            status: r.status,
            detailBlob: r.detailBlob,
          });
    });
    this.next(this.draw(this.timing.honestMs));
  }

  /**
   * The next episode begins `at` (world ms since the start) or, if no site's link is then up for
   * {@link CONTACT_MS} on end, when the first one is (by its contact windows); none if its shortest length
   * no longer fits in the days.
   */
  private next(at: number): void {
    const from = at + Math.min(...this.links.map((l) => l.msUntilUpFor(this.started + at, CONTACT_MS)));
    if (!Number.isFinite(from) || from + this.timing.episodeMs.min > this.daysMs) return;
    setTimeout(() => this.begin(), from - this.elapsed);
  }

  private begin(): void {
    const from = this.elapsed;
    const name = this.order[this.told++ % this.order.length] as LieName;
    const e: Episode = {
      lie: name,
      from,
      to: Math.min(this.daysMs, from + this.draw(this.timing.episodeMs)),
      did: {},
      forwarded: {},
      fakedBlobs: [],
      refusals: {},
    };
    this.episodes.push(e);
    const lie = makeLie(name);
    this.current = e;
    this.logging = e;
    this.hop.use(this.watched(lie));
    const check = () => {
      e.did = lie.did();
      const touched = Object.values(e.did).some((n) => n > 0);
      if (!touched && e.to < this.daysMs) {
        e.to = Math.min(this.daysMs, e.to + EXTEND_MS);
        setTimeout(check, e.to - this.elapsed);
        return;
      }
      this.hop.use(null);
      lie.release?.();
      this.current = null;
      this.next(e.to + this.draw(this.timing.honestMs));
    };
    setTimeout(check, e.to - from);
  }

  /** The lie's attack, watched: what it altered and passed on (and relay-1's answer), what uploads it faked. */
  private watched(lie: Lie) {
    const a = lie.attack;
    return {
      ...a,
      onRequest: async (req: HopRequest) => {
        const v = await a.onRequest?.(req);
        const e = this.current;
        if (v && e) {
          if ('forward' in v && !v.forward.body.equals(req.body)) this.forged.add(v.forward);
          if ('answer' in v && req.method === 'POST' && req.path.startsWith('/v1/uploads')) {
            const sha = uploadSha(req.headers);
            if (sha) e.fakedBlobs.push(sha);
          }
        }
        return v;
      },
      onResponse: async (req: HopRequest, res: HopResponse) => {
        const e = this.current;
        if (e && this.forged.has(req)) e.forwarded[res.status] = (e.forwarded[res.status] ?? 0) + 1;
        return a.onResponse?.(req, res);
      },
    };
  }

  /** Passes a request on to relay-1's own listener (this life's), as the world's network would hand it. */
  private async forward(req: HopRequest): Promise<HopResponse> {
    const relay = this.relay;
    if (!relay) throw new Error(`${RELAY} has no listener yet`);
    const res = await inject(relay, {
      method: req.method as 'GET',
      url: req.path,
      headers: {
        ...(cleanHeaders(req.headers, req.body.length) as Record<string, string>),
        host: `${RELAY}.world`,
      },
      ...(req.body.length > 0 ? { payload: req.body } : {}),
      remoteAddress: '127.0.0.1',
    });
    return { status: res.statusCode, headers: res.headers as IncomingHttpHeaders, body: res.rawPayload };
  }

  /** Warnings and errors of every node, refusals counted against the episode last begun. */
  private logger(): Logger {
    return pino(
      { level: 'warn' },
      {
        write: (line: string) => {
          const e = this.logging;
          if (!e) return;
          const msg = String((JSON.parse(line) as { msg?: unknown }).msg ?? '');
          if (!REFUSAL.test(msg)) return;
          const key = msg.length > 90 ? `${msg.slice(0, 90)}…` : msg;
          e.refusals[key] = (e.refusals[key] ?? 0) + 1;
        },
      },
    );
  }

  /**
   * Runs the world until every detail of a run recorded by `endedBy` is at the hub (an agent uploads a blob a
   * hop faked again once `sync.resendAfterS` passed without a hub receipt), at most `withinMs`; whether all came.
   */
  async drain(world: World, endedBy: number, withinMs: number): Promise<boolean> {
    const end = Date.now() + withinMs;
    for (;;) {
      if ((await this.missingDetails(world, endedBy)).length === 0) return true;
      if (Date.now() >= end) return false;
      await world.run(10 * MIN);
    }
  }

  /** Details of runs the agents recorded by `endedBy` that the hub does not hold. */
  async missingDetails(
    world: World,
    endedBy: number,
  ): Promise<Array<{ site: string; runId: string; sha256: string }>> {
    const missing: Array<{ site: string; runId: string; sha256: string }> = [];
    for (const [site, run] of agentRuns(world))
      if (run.detailBlob && run.finishedAt <= endedBy && !(await world.hub.store.getBlob(run.detailBlob)))
        missing.push({ site, runId: run.runId, sha256: run.detailBlob });
    return missing;
  }

  /**
   * What the hub holds against what the agents recorded: runs whose cell, status or detail differ from the
   * agent's record, and detail files whose bytes do not hash to their name.
   */
  compare(world: World): { runs: number; altered: string[]; details: number; badDetails: string[] } {
    const recorded = new Map(agentRuns(world).map(([site, r]) => [r.runId, { site, r }]));
    const altered: string[] = [];
    let runs = 0;
    for (const [id, h] of this.hubRuns) {
      const a = recorded.get(id);
      if (!a) continue; // not recorded by its agent at all: the ledger's 'nothing made up' counts it
      runs++;
      const same =
        a.site === h.site &&
        a.r.component === h.component &&
        a.r.environment === h.environment &&
        a.r.status === h.status &&
        a.r.detailBlob === h.detailBlob;
      if (!same)
        altered.push(
          `${h.site} ${id}: hub ${h.status} ${h.detailBlob}, agent ${a.r.status} ${a.r.detailBlob}`,
        );
    }
    const badDetails: string[] = [];
    const shas = new Set([...this.hubRuns.values()].map((h) => h.detailBlob).filter((s): s is string => !!s));
    let details = 0;
    for (const sha of shas) {
      let bytes: Buffer;
      try {
        bytes = readFileSync(join(world.root, 'hub', 'blobs', sha));
      } catch {
        continue; // not at the hub (yet): the detail drain names it
      }
      details++;
      if (createHash('sha256').update(bytes).digest('hex') !== sha) badDetails.push(sha);
    }
    return { runs, altered, details, badDetails };
  }
}

type AgentRun = ReturnType<NonNullable<World['sites'][number]['agent']>['storage']['cellRuns']>[number];

/** Every run each site's agent keeps (its cells' runs), with its site. */
function agentRuns(world: World): Array<[string, AgentRun]> {
  const out: Array<[string, AgentRun]> = [];
  for (const s of world.sites) {
    const storage = s.agent?.storage;
    if (!storage) continue;
    const cells = new Set<string>();
    for (const r of s.ledger.recorded.values()) cells.add(`${r.environment}\u0000${r.component}`);
    for (const cell of cells) {
      const [environment = '', component = ''] = cell.split('\u0000');
      for (const r of storage.cellRuns(environment, component, null, 100_000)) out.push([s.name, r]);
    }
  }
  return out;
}

/** The sha256 a tus creation announces (`Upload-Metadata: sha256 <base64>,…`). */
function uploadSha(h: IncomingHttpHeaders): string | null {
  for (const pair of String(h['upload-metadata'] ?? '').split(',')) {
    const [k, v] = pair.trim().split(' ');
    if (k === 'sha256' && v) return Buffer.from(v, 'base64').toString('utf8');
  }
  return null;
}

/** What a lie's refusal looks like, episode by episode (`lost`: the world's count of runs never at the hub). */
function refusedOf(e: Episode, lost: number, missing: ReadonlySet<string>): { held: boolean; how: string } {
  const answered = Object.entries(e.forwarded)
    .filter(([s]) => Number(s) >= 400)
    .reduce((n, [, c]) => n + c, 0);
  const logged = Object.values(e.refusals).reduce((n, c) => n + c, 0);
  switch (e.lie) {
    case 'fake tus completion': {
      const gone = e.fakedBlobs.filter((s) => missing.has(s));
      return {
        held: gone.length === 0,
        how: `${e.fakedBlobs.length} faked uploads, ${e.fakedBlobs.length - gone.length} of them at the hub after`,
      };
    }
    case 'swapped payloads': {
      const v1 = e.did['v1 posts'] ?? 0;
      return {
        held: v1 === 0 || answered + logged > 0,
        how: `${v1} v1 posts under another site's token, relay-1 refused ${answered} and logged ${logged} refusals; ${e.did['v2 pushes'] ?? 0} v2 pushes under another agent's request, each still its own agent's signed message (decision 495), every run at the hub checked against its site`,
      };
    }
    case 'fake receipts':
    case 'silent drops':
      return { held: lost === 0, how: `no agent pruned on it (${lost} runs lost)` };
    default:
      return {
        held: answered + logged > 0,
        how: `relay-1 refused ${answered} altered requests, ${logged} refusals logged`,
      };
  }
}

const clock = (ms: number) =>
  `${String(Math.floor(ms / HOUR)).padStart(2, '0')}:${String(Math.floor((ms % HOUR) / MIN)).padStart(2, '0')}`;

/**
 * What the `hostile` fault's runs must show (after the drain): every lie the days let end touched something, what was forged
 * was refused, and the hub holds what the agents recorded (each run's cell, status and detail, every detail
 * whole and present).
 */
export async function hostileInvariants(
  h: HostileFaults,
  world: World,
  endedBy: number,
  lost: number,
): Promise<Array<{ name: string; held: boolean; detail: string }>> {
  const missing = await h.missingDetails(world, endedBy);
  const gone = new Set<string>();
  for (const e of h.episodes)
    for (const sha of e.fakedBlobs) if (!(await world.hub.store.getBlob(sha))) gone.add(sha);
  // An episode that touched nothing is extended until it does (`begin`), so only the end of the days cuts
  // one short: a lie of uploads in the last hours of a day in which no site had a detail to upload. That one
  // is named and proves nothing; any other idle episode, or none touching anything, breaks the invariant.
  const untouched = h.episodes.filter((e) => Object.values(e.did).reduce((n, c) => n + c, 0) === 0);
  const idle = untouched.filter((e) => e.to < h.daysMs);
  const touched = h.episodes.length - untouched.length;
  const refusals = h.episodes.map((e) => ({ e, r: refusedOf(e, lost, gone) }));
  const notRefused = refusals.filter((x) => !x.r.held);
  const cmp = h.compare(world);
  const did = (e: Episode) =>
    Object.entries(e.did)
      .filter(([, n]) => n > 0)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ') || 'nothing';
  return [
    {
      name: 'the relay lied, and every lie the days let end touched something',
      held: touched > 0 && idle.length === 0,
      detail:
        h.episodes.length === 0
          ? 'no episode of lies fitted in the days'
          : h.episodes
              .map(
                (e) =>
                  `${e.lie} ${clock(e.from)}–${clock(e.to)} (${did(e)}${untouched.includes(e) && e.to >= h.daysMs ? ': cut by the end of the days, nothing to lie to' : ''})`,
              )
              .join('; '),
    },
    {
      name: 'what the relay forged was refused',
      held: notRefused.length === 0 && cmp.altered.length === 0,
      detail: [
        ...refusals.map((x) => `${x.e.lie}: ${x.r.how}${x.r.held ? '' : ' (NOT REFUSED)'}`),
        `${cmp.runs} runs at the hub checked against their agents' records (cell, status, detail): ${cmp.altered.length} differ${cmp.altered.length ? `: ${cmp.altered.slice(0, 3).join('; ')}` : ''}`,
      ].join('; '),
    },
    {
      name: 'every detail at the hub, whole',
      held: missing.length === 0 && cmp.badDetails.length === 0,
      detail:
        missing.length > 0 || cmp.badDetails.length > 0
          ? `${missing.length} details of runs recorded by the end not at the hub (${missing
              .slice(0, 3)
              .map((m) => `${m.site} ${m.runId} ${m.sha256.slice(0, 12)}`)
              .join('; ')}); ${cmp.badDetails.length} whose bytes do not hash to their name`
          : `${cmp.details} details at the hub, each hashing to its name; none of a run recorded by the end missing`,
    },
  ];
}
