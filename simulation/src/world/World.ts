import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  parseConfig as agentConfig,
  initAgentKey,
  type RunningAgent,
  startAgent,
} from '@driftline/edge-agent';
import { addUser, createHub, enrol, type Hub, parseConfig as hubConfig, sha256Hex } from '@driftline/hub';
import { parseWindows } from '@driftline/protocol';
import { createRelay, type Relay, parseConfig as relayConfig } from '@driftline/relay';
import inject from 'light-my-request';
import pino, { type Logger } from 'pino';
import type { LinkSettingsInput } from '../core/link/settings.js';
import { seededRandom } from '../core/rng.js';
import { InProcessTerraform } from './InProcessTerraform.js';
import { VirtualTime } from './VirtualTime.js';
import { type SiteLedger, WorldLedger } from './WorldLedger.js';
import { type WorldFaults, WorldLink } from './WorldLink.js';
import { type Dispatch, WorldNetwork, worldUrl } from './WorldNetwork.js';

/** Where a world begins: a fixed instant, so two runs of one seed read the same dates. */
export const WORLD_START = Date.UTC(2026, 0, 5);
const HOUR = 3_600_000;
/** Components per site when the spec says none (`stack-0`, `stack-1`). */
export const WORLD_COMPONENTS = 2;
/** The world's one relay's name (a node of the network, as `hub` and the sites are). */
export const RELAY = 'relay-1';
const RELAY_TOKEN = 'world-relay-token';
const ADMIN_TOKEN = 'world-admin-token';
/**
 * The hub's and relay's look at the tokens behind open held pulls: once a second by default (decision 411),
 * which was half a world's events; this world revokes nothing, so once a minute. Revocation is proven on the
 * default in the hostile suite's world (`revokeHeldPull.world.test.ts`).
 */
export const REVOCATION_CHECK_MS = 60_000;

export interface WorldSpec {
  seed: number;
  sites: number;
  /** One-way delay of each site's link to the relay (light time), ms. Default 4 minutes. */
  oneWayMs?: number;
  /** Each site's contact window: up `upMs` of every `periodMs`, its first opening drawn from the seed. */
  contact?: { periodMs: number; upMs: number } | null;
  /**
   * Where the sites' windows are declared: in each agent's `sync.contactWindows` (default) or only in the
   * hub's `contactPlans.sites`, which sends them down (docs/decisions/590-windows-declared-once.md).
   */
  windowsDeclaredAt?: 'agent' | 'hub';
  /** Loss, lost answers and duplicates on every site's link. */
  faults?: WorldFaults;
  /** Extra delay per exchange on every site's link, uniform in [0, jitterMs]. */
  jitterMs?: number;
  /** Components per site (one environment each). Default 2. */
  components?: number;
  /** When each cell plans (cron). Default hourly. */
  schedule?: string;
  /** Each site's link settings beside its delay and window (e.g. `{ whenDown: 'hang' }`). */
  siteLink?: Record<string, unknown>;
  /** The agents' `sync:` keys beside their contact windows (e.g. `{ intervalS: 30 }`). */
  agentSync?: Record<string, number | boolean>;
  /** The relay's `forward:` keys (the world's own: a forward check and a downlink pull a minute). */
  relayForward?: Record<string, number>;
  /** Every component's fake-terraform scenario (`fake-terraform.yaml`); default its built-in cycle. */
  scenario?: string;
  /** hub.yaml keys beside the world's own (e.g. `{ contactPlans: { graceS: 80 } }`). */
  hub?: Record<string, unknown>;
  /** The dashboard's built files, for a browser at headquarters ({@link World.listen}); default none. */
  uiDir?: string;
  /** Each agent's clock (default the world's): the `clock` fault's lying clocks (`clockFaults.ts`). */
  agentNow?: (site: string) => () => number;
  /** The relay's `storage.maxBytes` (default none): the `disk` fault fills the disk up to it (`diskFaults.ts`). */
  relayMaxBytes?: number;
  /**
   * The hub knows the relay's key (`hub peer rotate relay-1 --key …`), so it takes the relay's signed clock
   * terms (docs/decisions/290-signed-hop-chain.md); default unkeyed, whose clock claims narrow nothing
   * (decision 415): the hub then states agents' offsets as one-way bounds, without an uncertainty.
   */
  keyedRelay?: boolean;
  /** What stands in front of the relay's listener, each life of it (the `hostile` fault's lying hop, `hostileFaults.ts`). */
  relayFront?: (relay: Dispatch) => Dispatch;
  /** A site's `sync:` keys over `agentSync` (the `hostile` fault puts some sites on hop v1). */
  siteSync?: (site: string) => Record<string, number | boolean>;
  /** Every node's logger (default silent): the `hostile` fault counts the refusals the nodes log. */
  logger?: Logger;
  /**
   * Each site as a topology file describes it (`topologyFile.ts`): given, `sites` is its length and each
   * site's name, link, windows, cadences and components are its own (the uniform `oneWayMs`, `contact`,
   * `siteLink`, `schedule`, `components` are not read; `faults` and `jitterMs` add to a site's own).
   */
  siteSpecs?: readonly WorldSiteSpec[];
  /** The relay's link to the hub (default 20 ms each way, always up). */
  relayLink?: LinkSettingsInput;
  /** The relay's link's contact windows (window syntax): its upstream's declared plan, and when the link is up. */
  relayWindows?: readonly string[];
  /** Loss, lost answers and duplicates on the relay's link to the hub (default none). */
  relayFaults?: WorldFaults;
}

/** One site of a topology file (`topologyFile.ts`): what {@link WorldSpec.siteSpecs} holds per site. */
export interface WorldSiteSpec {
  name: string;
  /** Its link to the relay: delay, jitter, bandwidth, stalls, resets, `whenDown` (windows are `windows`). */
  link: LinkSettingsInput;
  /** Contact windows in the window syntax (`every 6h for 1h from …`); the link is up only inside them. None: always up. */
  windows: readonly string[];
  /** Loss, lost answers and duplicates per exchange on its link. */
  faults?: WorldFaults;
  /** The agent's `sync:` keys (e.g. `{ intervalS: 60 }`). */
  sync?: Record<string, number | boolean>;
  /** When each of its cells plans (cron); default hourly, staggered. */
  schedule?: string;
  /** Components (one environment each); default 2. */
  components?: number;
}

/** The hub on a real socket of this machine, for a browser at headquarters ({@link World.listen}). */
export interface HubOnSocket {
  url: string;
  /** Signs a browser in as the world's admin (the hub sets the session cookie and redirects to `/`). */
  signInUrl: string;
  close(): Promise<void>;
}

/** One site of the world: its agent, its link to the relay, and what the world saw it record. */
export interface WorldSite {
  name: string;
  dir: string;
  link: WorldLink;
  agent: RunningAgent | null;
  ledger: SiteLedger;
}

/**
 * The deterministic world (docs/decisions/540-deterministic-world.md): a hub, a relay and one agent per
 * site, each built by the factory its program uses (`createHub`, `createRelay`, `startAgent`), all in this
 * process, on one virtual clock ({@link VirtualTime}) and one seeded network ({@link WorldNetwork}). No
 * socket is opened and no process started: terraform runs in process ({@link InProcessTerraform}).
 */
export class World {
  readonly time = new VirtualTime();
  readonly net: WorldNetwork;
  readonly root: string;
  readonly sites: WorldSite[] = [];
  readonly ledger = new WorldLedger();
  hub!: Hub;
  relay!: Relay;
  private readonly random;
  /** Each site's first window opening after the world's start, ms (drawn from the seed as it starts). */
  private windowOffsets: number[] = [];
  private readonly log: Logger;
  private savedRandom: (() => number) | null = null;
  private relayStopped = false;
  /** Each site's agent start, kept for a restart after a crash. */
  private readonly agentStarts = new Map<string, () => Promise<RunningAgent>>();
  /** Nodes down now after a crash (`hub`, `relay-1`, a site's name). */
  private readonly downNodes = new Set<string>();
  private closing = false;
  /** Watchers of every hub commit, whichever life of the hub made it (the `clock` fault reads its runs' dates). */
  readonly hubCommits = new Set<(c: Parameters<Parameters<Hub['ingest']['onCommitted']>[0]>[0]) => void>();
  /** Crashes so far, and any node that failed to come back (an invariant of `npm run sim`). */
  readonly crashes = { count: 0, failed: [] as string[] };

  constructor(readonly spec: WorldSpec) {
    this.random = seededRandom(spec.seed);
    this.log = spec.logger ?? pino({ level: 'silent' });
    this.net = new WorldNetwork(seededRandom(`${spec.seed}:net`));
    this.root = mkdtempSync(join(worldTmp(), `driftline-world-${spec.seed}-`));
  }

  /** Installs the clock and starts every node; resolves once each is up (in virtual time). */
  async start(): Promise<void> {
    this.time.install(WORLD_START);
    // backoff jitter and the like read Math.random: the world's seed decides them too
    this.savedRandom = Math.random;
    Math.random = seededRandom(`${this.spec.seed}:math`);
    // each site's first opening, in site order (drawn here so the hub can declare them; the same draws a
    // site made as it started before)
    const contact = this.spec.siteSpecs ? null : this.contact();
    this.windowOffsets = Array.from({ length: this.spec.sites }, () =>
      contact ? Math.floor(this.random() * contact.periodMs) : 0,
    );
    await this.settle(this.startHub(), HOUR);
    await this.settle(this.startRelay(), HOUR);
    for (let i = 0; i < this.spec.sites; i++) await this.settle(this.startSite(i), HOUR);
  }

  /** Runs the world for `ms` of virtual time, the ledger watching after every event. */
  async run(ms: number): Promise<void> {
    await this.time.run(ms);
    this.observe();
  }

  /** Runs until `done()` or `withinMs` of virtual time; whether it held. */
  until(done: () => boolean, withinMs: number): Promise<boolean> {
    return this.time.until(done, withinMs);
  }

  /**
   * Looks every `everyMs` of world time until `look` gives something (an operator polling a page), at most
   * `withinMs`; a figure read from the answer is exact to `everyMs`.
   */
  async lookUntil<T>(
    what: string,
    look: () => Promise<T | false | undefined>,
    withinMs: number,
    everyMs: number,
  ): Promise<T> {
    const end = Date.now() + withinMs;
    while (Date.now() <= end) {
      const v = await look();
      if (v) return v;
      await this.run(everyMs);
    }
    throw new Error(`${what}: not within ${withinMs} ms of world time`);
  }

  /**
   * An operator's call of the hub's API (the admin's bearer token), at headquarters: no link. Steps the
   * world while the hub answers (its handlers may wait on the file system, never on time).
   */
  async hubCall(
    path: string,
    init: { method?: 'GET' | 'POST' | 'PUT' | 'DELETE'; body?: unknown; whileRunning?: boolean } = {},
  ): Promise<{ status: number; json: unknown; text: string }> {
    const server = this.hub.hop.server;
    const call = inject((req, r) => server.emit('request', req, r), {
      method: init.method ?? 'GET',
      url: path,
      headers: {
        authorization: `Bearer ${ADMIN_TOKEN}`,
        host: 'hub.world',
        ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(init.body === undefined ? {} : { payload: JSON.stringify(init.body) }),
    });
    // a call made from a world timer, while `run` drives the clock, must not drive it too
    const res = await (init.whileRunning ? call : this.settle(call, 60_000));
    let json: unknown = null;
    try {
      json = JSON.parse(res.body);
    } catch {}
    return { status: res.statusCode, json, text: res.body };
  }

  /** `GET path` of the hub's API, its JSON; anything but 200 throws, naming the status and body. */
  async hubApi<T>(path: string, whileRunning = false): Promise<T> {
    const r = await this.hubCall(path, { whileRunning });
    if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${JSON.stringify(r.json).slice(0, 300)}`);
    return r.json as T;
  }

  /**
   * The hub's listener on 127.0.0.1 (port 0), for a browser at headquarters: the one socket of a world,
   * with no link on it. Its answers read the world's clock, so the browser's clock must be set to it
   * (Playwright's `page.clock`); the world does not move while nobody runs it.
   */
  async listen(): Promise<HubOnSocket> {
    const hop = this.hub.hop.server;
    const server = createServer((req, res) => {
      hop.emit('request', req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return {
      url,
      signInUrl: `${url}/?token=${encodeURIComponent(ADMIN_TOKEN)}`,
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    };
  }

  /** The relay goes away (a stopped machine): its address refuses, its loops stop; its files stay. */
  async stopRelay(): Promise<void> {
    this.net.detach(RELAY);
    await this.settle(this.relay.stop(), HOUR).catch(() => undefined);
    this.relayStopped = true;
  }

  /** Every site's link up for good (contact windows off): what is left to carry, carried. */
  openAllLinks(): void {
    for (const s of this.sites) s.link.openForGood();
  }

  /** What the agents recorded and the hub committed, in one digest: equal for equal seeds, on any machine. */
  digest(): string {
    const h = createHash('sha256');
    h.update(JSON.stringify(this.ledger.canonical()));
    h.update(JSON.stringify(this.net.counts));
    // exchanges, not bytes: keys, run ids and Automerge actors are random, and Automerge deflates its
    // columns, so a message's size moves by a few bytes from run to run while nothing else does
    for (const s of this.sites) h.update(`${s.name}:${s.link.exchanges}`);
    return h.digest('hex').slice(0, 16);
  }

  /** Stops every node (each as its own stop does), uninstalls the clock, removes the world's files. */
  async close(): Promise<void> {
    this.closing = true;
    const stopping = Promise.all([
      ...this.sites.map((s) => s.agent?.stop()),
      this.relayStopped || this.downNodes.has(RELAY) ? undefined : this.relay?.stop(),
      this.downNodes.has('hub') ? undefined : this.hub?.close(),
    ]).catch(() => undefined);
    await this.settle(stopping, HOUR).catch(() => undefined);
    this.time.uninstall();
    if (this.savedRandom) Math.random = this.savedRandom;
    rmSync(this.root, { recursive: true, force: true });
  }

  /** Steps the world until `p` settles (at most `withinMs` of virtual time), and gives what it gave. */
  async settle<T>(p: Promise<T>, withinMs: number): Promise<T> {
    let state: { ok: true; value: T } | { ok: false; error: unknown } | null = null;
    p.then(
      (value) => {
        state = { ok: true, value };
      },
      (error: unknown) => {
        state = { ok: false, error };
      },
    );
    await this.time.until(() => state !== null, withinMs);
    const s = state as { ok: true; value: T } | { ok: false; error: unknown } | null;
    if (!s) throw new Error(`the world did not settle this within ${withinMs} ms of its time`);
    if (!s.ok) throw s.error;
    return s.value;
  }

  /** Reads every agent's unacknowledged runs into the ledger (a last look; each recording is read as it happens). */
  private observe(): void {
    for (const s of this.sites) if (s.agent) this.ledger.watchAgent(s.ledger, s.agent);
  }

  /**
   * The ledger reads a site's runs right after its agent records them (`recordMany`, which `record` calls
   * too), while they are surely unacknowledged: once per recording, not every agent after every event (that
   * was a third of a world's time at 10 sites, and grew with sites × events).
   */
  private watchRecords(site: WorldSite, agent: RunningAgent): void {
    const store = agent.store;
    const recordMany = store.recordMany.bind(store);
    store.recordMany = (inputs, opts) => {
      const results = recordMany(inputs, opts);
      this.ledger.watchAgent(site.ledger, agent);
      return results;
    };
    this.ledger.watchAgent(site.ledger, agent); // anything recorded while it started
    // every ack the agent takes, checked as it writes it against what the hub holds (an invariant per step)
    const storage = agent.storage;
    const commit = storage.commit.bind(storage);
    storage.commit = (writes) => {
      if (writes.runAcks?.length)
        this.ledger.agentAcked(
          site.ledger,
          writes.runAcks.map((a) => a.runId),
          Date.now(),
        );
      // and every prune, as it writes it: the epochs it marks pruned now, and those whose acked runs go
      const pruned = new Set(writes.ackedRunsDeleted ?? []);
      for (const e of writes.epochs ?? [])
        if (e.prunedAt !== null && storage.epoch(e.epoch)?.prunedAt == null) pruned.add(e.epoch);
      if (pruned.size > 0) this.ledger.agentPruned(site.ledger, [...pruned], Date.now());
      commit(writes);
    };
  }

  private contact(): { periodMs: number; upMs: number } | null {
    return this.spec.contact === undefined ? { periodMs: 6 * HOUR, upMs: 2 * HOUR } : this.spec.contact;
  }

  /** Site `i`'s windows in the declared syntax; none: always up. */
  private windowsOf(i: number): readonly string[] {
    const own = this.spec.siteSpecs?.[i];
    if (own) return own.windows;
    const contact = this.contact();
    if (!contact) return [];
    const from = new Date(WORLD_START + (this.windowOffsets[i] ?? 0)).toISOString();
    return [`every ${span(contact.periodMs)} for ${span(contact.upMs)} from ${from}`];
  }

  /** Site `i`'s name: its topology file's, or `site-001`, …. */
  nameOf(i: number): string {
    return this.spec.siteSpecs?.[i]?.name ?? siteName(i);
  }

  /** `contactPlans:` of hub.yaml: the spec's, with the sites' windows where the hub declares them. */
  private hubContactPlans(): Record<string, unknown> | undefined {
    const given = this.spec.hub?.contactPlans as Record<string, unknown> | undefined;
    if (this.spec.windowsDeclaredAt !== 'hub') return given;
    const sites: Record<string, string[]> = { ...((given?.sites as Record<string, string[]>) ?? {}) };
    for (let i = 0; i < this.spec.sites; i++) {
      const w = this.windowsOf(i);
      if (w.length > 0) sites[this.nameOf(i)] = [...w];
    }
    return { ...given, sites };
  }

  private async startHub(): Promise<void> {
    const dir = join(this.root, 'hub');
    const contactPlans = this.hubContactPlans();
    const hc = hubConfig(
      {
        ...this.spec.hub,
        ...(contactPlans ? { contactPlans } : {}),
        dataDir: dir,
        uiDir: this.spec.uiDir ?? join(dir, 'no-ui'),
        ingest: { mergeWorkers: 0 },
      },
      dir,
      {},
    );
    if (!hc.ok) throw new Error(`world hub config: ${hc.errors.join('; ')}`);
    const config = hc.config;
    this.openHub = async () => {
      this.hub = await createHub(config, { logger: this.log, revocationCheckMs: REVOCATION_CHECK_MS });
      const server = this.hub.hop.server;
      this.net.attach('hub', (req, res) => {
        server.emit('request', req, res);
      });
      this.hub.ingest.onCommitted((c) => {
        this.ledger.hubCommitted([...c.runs, ...c.cells], Date.now());
        for (const f of this.hubCommits) f(c);
      });
      this.hub.startTimers();
    };
    await this.openHub();
    await this.hub.store.commit({
      peers: [{ tokenSha256: sha256Hex(RELAY_TOKEN), name: RELAY, sites: ['*'] }],
    });
    const admin = await addUser(
      this.hub.store,
      { name: 'world-admin', roles: ['admin'], tokenSha256: sha256Hex(ADMIN_TOKEN) },
      Date.now(),
    );
    if (!admin.ok) throw new Error(`world admin: ${admin.error}`);
  }

  private async startRelay(): Promise<void> {
    const rc = relayConfig({
      name: RELAY,
      dataDir: join(this.root, RELAY),
      listen: { port: 0 },
      // a poll a minute: the relay beside the hub asks for each site's downlink this often (decision 540)
      forward: { idleMs: 60_000, pullIntervalMs: 60_000, ...this.spec.relayForward },
      ...(this.spec.relayMaxBytes ? { storage: { maxBytes: this.spec.relayMaxBytes } } : {}),
      publications: { intervalMs: 60_000 },
      sites: Array.from({ length: this.spec.sites }, (_, i) => this.nameOf(i)),
    });
    if (!rc.ok) throw new Error(`world relay config: ${rc.errors.join('; ')}`);
    const config = rc.value;
    let life = 0;
    this.openRelay = () => {
      this.relay = createRelay(
        config,
        [
          {
            name: 'hub',
            url: worldUrl('hub'),
            token: RELAY_TOKEN,
            plan: { windows: parseWindows(this.spec.relayWindows ?? []) },
          },
        ],
        {
          logger: this.log,
          // each life its own stream of the seed: a restarted relay does not replay its first life's draws
          random: seededRandom(`${this.spec.seed}:${RELAY}${life++ > 0 ? `:${life}` : ''}`),
          transport: this.net.transport(RELAY),
          revocationCheckMs: REVOCATION_CHECK_MS,
        },
      );
      const server = this.relay.hop.server;
      const listener: Dispatch = (req, res) => {
        server.emit('request', req, res);
      };
      this.net.attach(RELAY, this.spec.relayFront?.(listener) ?? listener);
    };
    this.openRelay();
    if (this.spec.keyedRelay)
      await this.hub.store.commit({
        peers: [
          { tokenSha256: sha256Hex(RELAY_TOKEN), name: RELAY, sites: ['*'], publicKey: this.relay.publicKey },
        ],
      });
    // the relay beside the hub: a short, steady link (unless a topology file says otherwise)
    const relayLink = new WorldLink(
      `${RELAY}>hub`,
      this.spec.relayLink ?? { uplink: { delayMs: 20 }, downlink: { delayMs: 20 } },
      WORLD_START,
      this.spec.relayFaults,
      this.spec.relayFaults ? seededRandom(`${this.spec.seed}:${RELAY}>hub`) : undefined,
    );
    if (this.spec.relayWindows?.length) relayLink.windows = parseWindows(this.spec.relayWindows);
    this.net.connect(RELAY, 'hub', relayLink);
    this.relay.startLoops();
  }

  private openHub: () => Promise<void> = async () => {};
  private openRelay: () => void = () => {};

  /**
   * `node` (`hub`, `relay-1` or a site's name) goes down without warning and starts again from its files
   * `downMs` later (the `crash` fault, docs/decisions/540-deterministic-world.md). Its links are cut first,
   * so nothing under way with it is answered either way (WorldNetwork.down); then it stops as its program
   * does (in one process nothing can take its memory away mid-write: a SIGKILL mid-transaction stays the
   * process lane's `scenario` test) and, after the downtime, opens its data directory again. A node that
   * fails to come back is named in {@link crashes}.
   */
  /** `node` is down now (crashed, not back yet). */
  isDown(node: string): boolean {
    return this.downNodes.has(node);
  }

  async crash(node: string, downMs: number): Promise<void> {
    if (this.closing || this.downNodes.has(node)) return;
    this.downNodes.add(node);
    this.crashes.count++;
    this.net.down(node);
    const site = this.sites.find((s) => s.name === node);
    try {
      if (node === 'hub') await this.hub.close();
      else if (node === RELAY) await this.relay.stop();
      else {
        const agent = site?.agent;
        if (site) site.agent = null;
        await agent?.stop();
      }
      await new Promise((r) => setTimeout(r, downMs));
      if (this.closing) return;
      if (node === 'hub') await this.openHub();
      else if (node === RELAY) {
        this.openRelay();
        this.relay.startLoops();
      } else {
        const start = this.agentStarts.get(node);
        if (site && start) {
          site.agent = await start();
          this.watchRecords(site, site.agent);
        }
      }
    } catch (e) {
      this.crashes.failed.push(`${node}: ${(e as Error).message}`);
    } finally {
      this.downNodes.delete(node);
    }
  }

  private async startSite(i: number): Promise<void> {
    const name = this.nameOf(i);
    const own = this.spec.siteSpecs?.[i];
    const dir = join(this.root, name);
    const dataDir = join(dir, 'data');
    const { publicKey } = await initAgentKey(dataDir);
    const e = await enrol(this.hub.store, { site: name, agent: 'a1', key: publicKey }, Date.now());
    if (!e.ok) throw new Error(`world enrol ${name}: ${e.error}`);
    writeFileSync(join(dir, 'hub.pub'), `${this.hub.publicKeyText}\n`);
    writeFileSync(join(dir, 'agent.token'), `${this.relay.tokens.add(name, [name])}\n`);
    const components = own?.components ?? this.spec.components ?? WORLD_COMPONENTS;
    const contact = own ? null : this.contact();
    const offsetMs = this.windowOffsets[i] ?? 0;
    const windows = this.spec.windowsDeclaredAt === 'hub' ? [] : this.windowsOf(i);
    const lines = [
      `site: ${name}`,
      'agent: a1',
      'dataDir: ./data',
      'hubPublicKeyFile: ./hub.pub',
      'upstreams:',
      `  - url: ${worldUrl(RELAY)}`,
      '    tokenFile: ./agent.token',
      'publications: { retryMs: 60000 }',
      ...yamlSection('sync', [
        ...(windows.length > 0
          ? [`contactWindows: [${windows.map((w) => JSON.stringify(w)).join(', ')}]`]
          : []),
        ...Object.entries({ ...this.spec.agentSync, ...this.spec.siteSync?.(name), ...own?.sync }).map(
          ([k, v]) => `${k}: ${v}`,
        ),
      ]),
      'components:',
    ];
    for (let c = 0; c < components; c++) {
      const comp = `stack-${c}`;
      mkdirSync(join(dir, comp), { recursive: true });
      writeFileSync(join(dir, comp, 'main.tf'), `# ${name} ${comp}\n`);
      if (this.spec.scenario) writeFileSync(join(dir, comp, 'fake-terraform.yaml'), this.spec.scenario);
      lines.push(
        `  - name: ${comp}`,
        `    workingDir: ./${comp}`,
        '    environments: [prod]',
        `    schedule: "${own?.schedule ?? this.spec.schedule ?? `${(i * 7 + c * 13) % 60} * * * *`}"`,
      );
    }
    writeFileSync(join(dir, 'agent.yaml'), `${lines.join('\n')}\n`);
    const parsed = agentConfig(`${lines.join('\n')}\n`, dir, join(dir, 'agent.yaml'));
    if (!parsed.ok) throw new Error(`world agent config ${name}: ${parsed.problems.join('; ')}`);
    const link = own
      ? ownSiteLink(this.spec.seed, name, own, this.spec)
      : new WorldLink(
          `${name}>${RELAY}`,
          {
            uplink: { delayMs: this.spec.oneWayMs ?? 4 * 60_000, jitterMs: this.spec.jitterMs ?? 0 },
            downlink: { delayMs: this.spec.oneWayMs ?? 4 * 60_000, jitterMs: this.spec.jitterMs ?? 0 },
            schedule: contact ? { ...contact, offsetMs } : null,
            ...this.spec.siteLink,
          },
          WORLD_START,
          this.spec.faults,
          seededRandom(`${this.spec.seed}:${name}`),
        );
    this.net.connect(name, RELAY, link);
    const site: WorldSite = { name, dir, link, agent: null, ledger: this.ledger.site(name) };
    this.sites.push(site);
    let life = 0;
    const start = () => {
      // each life its own streams of the seed (the first life's are the ones a world without crashes uses)
      const l = life++ > 0 ? `:${life}` : '';
      return startAgent(parsed.config, {
        log: this.log,
        transport: this.net.transport(name),
        runner: new InProcessTerraform(),
        gitProbe: { describe: async () => undefined },
        random: {
          sync: seededRandom(`${this.spec.seed}:${name}:sync${l}`),
          schedule: seededRandom(`${this.spec.seed}:${name}:schedule${l}`),
        },
        toolEnv: { PATH: '/usr/bin:/bin', HOME: dir },
        ...(this.spec.agentNow ? { now: this.spec.agentNow(name) } : {}),
      });
    };
    this.agentStarts.set(name, start);
    site.agent = await start();
    this.watchRecords(site, site.agent);
  }
}

/**
 * A topology file's site link: its own settings and windows, the world's `faults` and `jitterMs` (the
 * `links` fault) added to its own.
 */
function ownSiteLink(seed: number, name: string, own: WorldSiteSpec, spec: WorldSpec): WorldLink {
  const extra = spec.jitterMs ?? 0;
  const jitter = (d: LinkSettingsInput['uplink']) => ({ ...d, jitterMs: (d?.jitterMs ?? 0) + extra });
  const f = own.faults;
  const g = spec.faults;
  const faults =
    f || g
      ? {
          lossRate: Math.min(1, (f?.lossRate ?? 0) + (g?.lossRate ?? 0)),
          answerLossRate: Math.min(1, (f?.answerLossRate ?? 0) + (g?.answerLossRate ?? 0)),
          duplicateRate: Math.min(1, (f?.duplicateRate ?? 0) + (g?.duplicateRate ?? 0)),
        }
      : undefined;
  const link = new WorldLink(
    `${name}>${RELAY}`,
    { ...own.link, uplink: jitter(own.link.uplink), downlink: jitter(own.link.downlink), schedule: null },
    WORLD_START,
    faults,
    seededRandom(`${seed}:${name}`),
  );
  if (own.windows.length > 0) link.windows = parseWindows(own.windows);
  return link;
}

const yamlSection = (name: string, lines: string[]) =>
  lines.length > 0 ? [`${name}:`, ...lines.map((l) => `  ${l}`)] : [];

/** A window's span as its syntax writes it: whole minutes as `4m`, anything else in seconds (`40s`). */
const span = (ms: number) => (ms % 60_000 === 0 ? `${ms / 60_000}m` : `${Math.round(ms / 1000)}s`);

export const siteName = (i: number) => `site-${String(i + 1).padStart(3, '0')}`;

/** Memory-backed when the machine has room there (/dev/shm): the world's files are scratch, and a disk's
 * waits are real time the world would spend idle. A container's /dev/shm is often 64 MB, too small for a
 * long world's SQLite files, so below 1 GiB free the world uses the ordinary temp folder. */
export function worldTmp(): string {
  try {
    const fs = statfsSync('/dev/shm');
    if (fs.bavail * fs.bsize >= 1024 ** 3) return '/dev/shm';
  } catch {}
  return tmpdir();
}
