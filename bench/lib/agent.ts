import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentLedger, Uplink } from '@driftline/edge-agent';
import {
  HttpUplink,
  openSqliteLedger,
  packDetail,
  SqliteUrlStorage,
  SyncEngine,
  Wire2State,
} from '@driftline/edge-agent';
import { cryptoRandomBytes, monotonicUlid, type SigningKeyPair } from '@driftline/protocol';
import type { RealPlan } from './plans.js';

export const tmp = (prefix: string) => mkdtempSync(join(tmpdir(), `driftline-bench-${prefix}-`));

export const SITE = 'ship-7';
export const AGENT = 'a1';

/** The agent's real ledger over SQLite in a fresh directory; `now` may be synthetic. */
export function agentStore(
  now: () => number = Date.now,
  over: { maxDocBytes?: number; holdNewsMs?: number; heartbeats?: boolean } = {},
): AgentLedger {
  const path = join(tmp('agent'), 'agent.sqlite');
  const { ledger, db } = openSqliteLedger({ path, site: SITE, agent: AGENT, now, ...over });
  urlStorages.set(ledger, new SqliteUrlStorage(db));
  return ledger;
}

/** tus resume memory over each ledger's file (the same connection, as `edge-agent run` wires it). */
const urlStorages = new WeakMap<AgentLedger, SqliteUrlStorage>();

export function httpUplink(
  store: AgentLedger,
  url: string,
  token: string,
  /** The daemon's own: 30 min per request (it bounds the hold asked), its clock. Default 120 s, `Date.now`. */
  opts: {
    requestTimeoutMs?: number;
    now?: () => number;
    /** Hop v2 where the upstream speaks it (`sync.wire: 2`): the agent's keys, as `edge-agent run` wires them. */
    wire2?: { privateKey: CryptoKey; publicKey: string; state: Wire2State };
    /** Carry v2 on h2c where the relay states it (`sync.h2c`); default true, as the agent's. */
    h2c?: boolean;
  } = {},
): HttpUplink {
  const urlStorage = urlStorages.get(store);
  if (!urlStorage) throw new Error('httpUplink: pass a ledger agentStore opened');
  return new HttpUplink({
    url,
    token,
    urlStorage,
    requestTimeoutMs: opts.requestTimeoutMs ?? 120_000,
    ...(opts.now ? { now: opts.now } : {}),
    ...(opts.h2c === undefined ? {} : { h2c: opts.h2c }),
    ...(opts.wire2
      ? {
          wire2: {
            site: SITE,
            agent: AGENT,
            ...opts.wire2,
            // as `edge-agent run` wires it: quiet rounds as heartbeats (decision 500)
            heartbeatForm: (epoch: number, changes: Uint8Array) => store.heartbeatForm(epoch, changes),
            // a push of a round under way asks its ack to come with the next (decision 525)
            ackLaterS: () => store.ackLaterS(),
          },
        }
      : {}),
  });
}

/** The agent's real sync engine (the same one `edge-agent run` wires). */
export function syncEngine(
  store: AgentLedger,
  uplinks: Uplink[],
  keys: SigningKeyPair,
  hubPublicKey: CryptoKey,
  now: () => number = Date.now,
  /** The hop v2 state its uplinks share (`sync.wire: 2`), for the acks that name their pushes. */
  wire2?: Wire2State,
): SyncEngine {
  return new SyncEngine({
    site: SITE,
    agent: AGENT,
    store,
    uplinks,
    ...(wire2 ? { wire2 } : {}),
    privateKey: keys.privateKey,
    hubPublicKey,
    allowsCell: () => true,
    onPlanRequest: () => {},
    newBundleId: monotonicUlid(now, cryptoRandomBytes),
    now,
    log: { info: () => {}, warn: () => {} },
  });
}

export const newRunId = (now: () => number = Date.now) => monotonicUlid(now, cryptoRandomBytes);

/** Records a plan the way the daemon does (app.ts): detail packed as a blob, agent facts refreshed. */
/** What the daemon records for one finished plan (`record` / `recordMany` input). */
export function planInput(runId: string, p: RealPlan, cadenceS: Record<string, number>) {
  return {
    runId,
    summary: p.summary,
    detail: packDetail(p.canonical),
    facts: { version: '0.1.0', cadenceS, contactIntervalS: 900, upstream: 'http://relay.invalid' },
  };
}

export function recordPlan(store: AgentLedger, runId: string, p: RealPlan, cadenceS: Record<string, number>) {
  return store.record(planInput(runId, p, cadenceS));
}

export function log(part: string, msg: string, obj: object = {}): void {
  process.stderr.write(`[bench:${part}] ${msg}${Object.keys(obj).length ? ` ${JSON.stringify(obj)}` : ''}\n`);
}

/** Prints a part's result: one JSON line on stdout, read by bench/run.ts. */
export function emit(result: object): void {
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

export const isQuick = process.argv.includes('--quick');

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `cond` every `stepMs` until true or `ms` passed; returns whether it became true. */
export async function until(
  cond: () => boolean | Promise<boolean>,
  ms: number,
  stepMs = 10,
): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await cond()) return true;
    await sleep(stepMs);
  }
  return cond();
}

/** A fresh hop v2 state file for a bench agent. */
export const wire2State = () => new Wire2State(join(tmp('wire2'), 'wire2-state.json'));
