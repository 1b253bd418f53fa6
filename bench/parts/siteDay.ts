/**
 * siteDay (issue 33): what one site spends on its link in a day. 200 cells on the default schedule
 * (`0 *\/6 * * *`: four plans a day each), the default sync settings (`sync.intervalS` 30, held pulls of
 * `sync.downlinkHoldS`), 24 h of synthetic time: the agent's real ledger and SyncEngine push to a real relay
 * and hub in process through a tap that counts every byte of every request and answer (HTTP heads
 * included, TLS excluded). (a) a quiet day: every plan equal to the last; (b) a busy day: 5 % of cells
 * change per plan round. Pushes, acks and the held pulls that carry them are measured; the empty pulls
 * between are measured once and counted per day (a held pull per hold while nothing arrives: the least of
 * the agent's `sync.downlinkHoldS` and the relay's stated `limits.maxHoldS`; or a pull per
 * `sync.intervalS` with holding off). The empty pull is measured as the agent sends it once it knows the
 * relay (conditional, answered 304), asked with `wait=0` and counted with the digits of the real hold;
 * two held pulls at once where the relay keeps two (decision 340), one with `--one-lane`. Beside it, in the same run: the floor (the facts that changed,
 * brotli-compressed, plus one 64-byte signature per batch), a second floor with one signature per direction
 * per round (the agent's word up, the hub's acknowledgement down: `floorBothWaysBytes`, issue 46) and the same changes through Automerge's sync
 * protocol (its messages alone, no transport). The cost at `--tariff=<USD per MB>` (default 5, a satellite
 * data plan's order of magnitude). (c) `busyAsDaemon`: the busy day again, its plans finishing 10 s apart
 * and whatever the ledger has due pushed after each, as the daemon's sync loop is kicked by every result
 * (decision 395): the number of pushes a busy round really costs, with the default settings (a cron
 * round's news waits for it, at most min(600 s, a tenth of the cadence): decision 485); (d)
 * `busyNewsAtOnce`: the same with `sync.newsHoldS: 0` (each changed plan with the next push, the default
 * before decision 485). `--breakdown` (issue 46, bench part hopV2Budget): the quiet and busy days only, each
 * with its first round's exchanges and a timed empty pull opened (`exchangeBreakdown`), and every round's
 * facts and pushed Automerge changes, for the v2 budget to rebuild the same rounds.
 */
import { brotliCompressSync } from 'node:zlib';
import * as A from '@automerge/automerge';
import { HELD_SAMPLE_EVERY_MS } from '@driftline/hop/client';
import { generateSigningKeyPair, publicKeyToText, wire2 } from '@driftline/protocol';
import {
  agentStore,
  emit,
  httpUplink,
  log,
  newRunId,
  planInput,
  recordPlan,
  syncEngine,
  until,
  wire2State,
} from '../lib/agent.js';
import { startH2Tap } from '../lib/h2Tap.js';
import { startHttpTap, type TappedResponse } from '../lib/httpTap.js';
import { type PlanState, realPlan, rng } from '../lib/plans.js';
import { type DayResult, type RoundFacts, ratedDay, wire } from '../lib/siteDayResult.js';
import { startChain } from '../lib/topology.js';
import { exchangeBreakdown, pushedChanges } from '../lib/v1Breakdown.js';

const CELLS = 200;
const ROUNDS = 4; // the default schedule, every 6 h
const INTERVAL_S = 30;
/** The agent's `sync.downlinkHoldS` default: it asks for no more than the relay states. */
const AGENT_HOLD_S = 21_600;
const DAY_S = 86_400;
const tariffArg = process.argv.find((a) => a.startsWith('--tariff='));
const TARIFF = tariffArg ? Number(tariffArg.slice('--tariff='.length)) : 5;
/** `--whole-confirmations`: every unchanged plan rewrites its cell, as before decision 330. */
const WHOLE_CONFIRMATIONS = process.argv.includes('--whole-confirmations');
const BATCHED = process.argv.includes('--batched');
const ONE_PER_PLAN = process.argv.includes('--one-change-per-plan');
const ONE_LANE = process.argv.includes('--one-lane');
/** Seconds between two plans' ends in a round, as the daemon runs them (`asDaemon`). */
const PLAN_GAP_S = 10;
const BREAKDOWN = process.argv.includes('--breakdown');
/** `--wire=2`: the agent speaks hop v2 to the relay (`sync.wire: 2`, decision 495); default v1. */
const WIRE2 = process.argv.includes('--wire=2');

/**
 * `asDaemon`: the round's plans finish one every {@link PLAN_GAP_S} and, as the daemon's sync loop is
 * kicked by each result, whatever the ledger has due goes up at once: by default a cron round's changed
 * plan waits for its round (decision 485); `newsHoldS` 0 sends each with the next push (one push and ack
 * per changed plan). `newsHoldS` absent: the agent's default.
 */
async function day(
  changeShare: number,
  seed: number,
  asDaemon = false,
  newsHoldS?: number,
  h2c = false,
): Promise<DayResult & { pushes: number; breakdown?: unknown; rounds?: RoundFacts[] }> {
  const keys = await generateSigningKeyPair();
  const state = WIRE2 ? wire2State() : undefined;
  const chain = await startChain(keys.publicKey, {}, { pullIntervalMs: 200 }, {});
  const holdS = Math.min(AGENT_HOLD_S, chain.maxHoldS);
  // v2's POST bodies kept: a 204 answers a held pull or a push of a round under way (decision 530)
  const tap = await startHttpTap(
    chain.agentLink.port,
    undefined,
    (method) => BREAKDOWN || (WIRE2 && method === 'POST'),
  );
  // h2c (issue 46): the agent's v2 exchanges ride one HTTP/2 connection, counted frame by frame on the
  // socket into the same list; its HTTP/1.1 requests (the registration) go on through the HTTP tap
  const h2tap = h2c ? await startH2Tap(chain.agentLink.port, tap.port, tap.responses) : null;
  // Rounds run back to back on the real clock (the relay drops bundles past their lifetime, the hub
  // distrusts a clock that runs ahead); the day's shape is in the counts: four rounds, the pulls between.
  let now = Date.now();
  let skew = 0;
  const clock = () => now;
  // `sync.wire: 2` writes quiet rounds as heartbeat changes (decision 500), as the agent's store does
  const store = agentStore(clock, {
    ...(newsHoldS === undefined ? {} : { holdNewsMs: newsHoldS * 1000 }),
    ...(WIRE2 ? { heartbeats: true } : {}),
  });
  if (WHOLE_CONFIRMATIONS) {
    // As with a hub older than decision 330: its acks never say it reads confirmations written apart.
    const applyAck = store.applyAck.bind(store);
    store.applyAck = ({ readsConfirmed: _r, ...ack }) => applyAck(ack);
  }
  const engine = syncEngine(
    store,
    // The daemon's request timeout (30 min: it bounds the hold asked). Exchanges are timed on the real
    // clock (plus `skew`, moved an hour to measure a timed held pull): the day's clock above jumps.
    [
      httpUplink(store, `http://127.0.0.1:${h2tap?.port ?? tap.port}`, chain.agentToken, {
        requestTimeoutMs: 1_800_000,
        h2c,
        now: () => Date.now() + skew,
        ...(state
          ? {
              wire2: { privateKey: keys.privateKey, publicKey: await publicKeyToText(keys.publicKey), state },
            }
          : {}),
      }),
    ],
    keys,
    chain.hubPublicKey,
    clock,
    state,
  );
  const ids = newRunId(clock);
  const comps = Array.from({ length: CELLS }, (_, i) => `component-${String(i).padStart(3, '0')}`);
  const cadenceS = Object.fromEntries(comps.map((c) => [`prod/${c}`, 6 * 3600]));
  const states = comps.map((_, i) => ({
    state: (i % 5 === 0 ? 'changes' : 'clean') as PlanState,
    variant: 0,
  }));
  const r = rng(seed);
  // Automerge's sync protocol over the same changes: a replica of the agent's document and the hub's.
  let agentDoc = A.init<Record<string, unknown>>();
  let hubDoc = A.init<Record<string, unknown>>();
  let agentSync = A.initSyncState();
  let hubSync = A.initSyncState();
  let automergeSyncBytes = 0;
  const syncRound = () => {
    for (let i = 0; i < 50; i++) {
      const [a2, m1] = A.generateSyncMessage(agentDoc, agentSync);
      agentSync = a2;
      if (m1) {
        automergeSyncBytes += m1.length;
        [hubDoc, hubSync] = A.receiveSyncMessage(hubDoc, hubSync, m1);
      }
      const [h2, m2] = A.generateSyncMessage(hubDoc, hubSync);
      hubSync = h2;
      if (m2) {
        automergeSyncBytes += m2.length;
        [agentDoc, agentSync] = A.receiveSyncMessage(agentDoc, agentSync, m2);
      }
      if (!m1 && !m2) return;
    }
  };
  const mirror = () => {
    for (const p of store.pending()) agentDoc = A.loadIncremental(agentDoc, p.changes);
  };
  const roundTrip = async () => {
    mirror();
    // a push of a round under way asks its ack to come with the next one (v2, decision 525): the daemon's
    // standing held pulls stay open, nothing comes down for it, and the round's last push is acked for all
    const later = WIRE2 ? store.ackLaterS() : undefined;
    const pushed = await engine.pushOnce();
    if (pushed.kind !== 'pushed' && pushed.kind !== 'idle')
      throw new Error(`push: ${JSON.stringify(pushed)}`);
    if (later !== undefined) {
      syncRound();
      return;
    }
    // The ack comes back on the daemon's standing held pull, woken when the ack reaches the relay.
    const acked = await until(
      async () => {
        await engine.pullOnce({ waitS: holdS });
        return store.pending().length === 0;
      },
      30_000,
      50,
    );
    if (!acked) throw new Error('the hub never acknowledged the round');
    syncRound();
  };

  let pushes = 0;
  const recordAsDaemon = async (inputs: ReturnType<typeof planInput>[]) => {
    const out = [];
    for (const [i, x] of inputs.entries()) {
      out.push(store.recordMany([x], { moreComing: i < inputs.length - 1 })[0]);
      now += PLAN_GAP_S * 1000;
      if (store.pending().length > 0) {
        pushes++;
        await roundTrip();
      }
    }
    return out;
  };
  // The estate as the hub already holds it (not counted).
  for (const [i, c] of comps.entries()) {
    now += 100;
    recordPlan(store, ids(), realPlan(c, states[i]!.state, states[i]!.variant, now, i % 10), cadenceS);
  }
  await roundTrip();
  // A day of a daemon that has been running: one quiet round before the day, not counted. On hop v2 its
  // heartbeat change goes as bytes and the hub's ack says it rebuilds heartbeats (decision 500), as a
  // running agent knows (and keeps in its state file); on v1 it changes nothing but the counts in entries.
  now += 1000;
  store.recordMany(
    comps.map((c, i) => {
      now += 50;
      const runId = ids();
      return {
        ...planInput(runId, realPlan(c, states[i]!.state, states[i]!.variant, now, i % 10), cadenceS),
        scheduledEveryS: 6 * 3600,
      };
    }),
  );
  await roundTrip();
  // the daemon's first pull asks, and learns how the relay holds: how long, and how many at once
  const asked = await engine.pullOnce({ waitS: 0 });
  // `--one-lane`: one held pull at a time (`sync.heldPulls: 1`; as before decision 340).
  const lanes = ONE_LANE ? 1 : Math.min(2, asked.keep ?? 1);
  const counted = tap.responses.length;
  const connAtStart = h2tap ? { ...h2tap.connection } : null;
  automergeSyncBytes = 0;

  let floorBytes = 0;
  let floorBothWaysBytes = 0;
  const rounds: RoundFacts[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    now = Math.max(now + 1000, Date.now());
    const facts: object[] = [];
    const plans: { c: string; at: number; p: ReturnType<typeof realPlan>; runId: string }[] = [];
    for (const [i, c] of comps.entries()) {
      now += 50;
      if (r() < changeShare) {
        states[i]!.state = states[i]!.state === 'clean' ? 'changes' : 'clean';
        states[i]!.variant = (states[i]!.variant + 1) % 4;
      }
      plans.push({
        c,
        at: now,
        p: realPlan(c, states[i]!.state, states[i]!.variant, now, i % 10),
        runId: ids(),
      });
    }
    // One commit per plan, each told whether more of the round are coming, as the daemon's RecordBatcher
    // commits a round whose plans each outlast its record window (the ledger holds the confirmations until
    // the last: decision 370); `--one-change-per-plan`: each recorded alone, as before decision 370;
    // `--batched`: the round as one commit, as the batcher commits a cron tick whose plans finish together.
    // A cron round's plans, as the daemon records them: each with its cell's cadence (decision 485).
    const input = ({ p, runId }: (typeof plans)[number]) => ({
      ...planInput(runId, p, cadenceS),
      scheduledEveryS: 6 * 3600,
    });
    const recorded = asDaemon
      ? await recordAsDaemon(plans.map(input))
      : BATCHED
        ? store.recordMany(plans.map(input))
        : ONE_PER_PLAN
          ? plans.map(({ p, runId }) => recordPlan(store, runId, p, cadenceS))
          : plans.map((x, i) => store.recordMany([input(x)], { moreComing: i < plans.length - 1 })[0]);
    for (const [i, { c, at, p }] of plans.entries()) {
      if (recorded[i]?.unchanged) facts.push({ c, at });
      else {
        const { resources: _r, ...s } = p.summary;
        facts.push({ c, at, s });
      }
    }
    rounds.push({
      cells: plans.map(({ at }, i) => ({ at, changed: !recorded[i]?.unchanged })),
      changes: [],
    });
    const factBytes = brotliCompressSync(JSON.stringify(facts)).length;
    floorBytes += factBytes + 64;
    floorBothWaysBytes += factBytes + 2 * 64;
    if (!asDaemon) {
      pushes++;
      await roundTrip();
    }
  }
  await engine.pullOnce(); // one empty pull as polling sends it (`sync.downlinkHoldS` 0)
  await engine.pullOnce({ waitS: 0 }); // one empty pull as a held one goes, `wait=0` (not held)
  skew += HELD_SAMPLE_EVERY_MS; // an hour on: the next held pull is timed (clock sample, server's stamp)
  await engine.pullOnce({ waitS: 0 });

  const measured = tap.responses.slice(counted);
  const posts = measured.filter((x) => x.method === 'POST');
  for (const [i, r] of rounds.entries())
    r.changes = (posts[i] ? pushedChanges(posts[i]) : []).map((c) => Buffer.from(c).toString('base64'));
  // The three pulls made last are the measured empty ones (as polling sends it, as a held one goes, and
  // as one goes once an hour, timed); a held pull that ended with nothing during the rounds (304) is one
  // of the day's held pulls counted below.
  const [pollPull, last, timedPull] = measured.slice(-3);
  const isPull = (x: TappedResponse) => x.method === 'GET' && x.path.startsWith('/v1/bundles');
  // v2: a held pull that ended with nothing is a 204; so is a push of a round under way (decision 530),
  // told apart by the message it answered
  const isV2Push = (x: TappedResponse) => {
    const m = x.reqBody ? wire2.decodeMessage(new Uint8Array(x.reqBody)) : null;
    return m?.ok === true && m.value.kind === 'push';
  };
  const emptyHeld = (x: TappedResponse) =>
    WIRE2 ? x.status === 204 && !isV2Push(x) : isPull(x) && x.status === 304;
  const data = measured.slice(0, -3).filter((x) => !emptyHeld(x));
  const dataUp = data.reduce((n, x) => n + wire(x).up, 0);
  const dataDown = data.reduce((n, x) => n + wire(x).down, 0);
  const busyRequests = data.length;
  // `wait=0` and `0;max=…` where a held pull says `wait=<hold>` and `<hold>;max=…`: the digits added.
  // v2: `holdS` 0 is one byte of CBOR where the hold is 3 (up to 65,535 s) or 5.
  const digits = WIRE2
    ? holdS < 24
      ? 0
      : holdS < 256
        ? 1
        : holdS < 65_536
          ? 2
          : 4
    : String(holdS).length - 1;
  const withDigits = (x: TappedResponse | undefined) =>
    x ? { up: wire(x).up + digits, down: wire(x).down + digits } : { up: 0, down: 0 };
  const empty = withDigits(last);
  const emptyTimed = withDigits(timedPull);
  // The pulls a day holds between its rounds: one per hold, or one per interval with holding off. Since
  // decision 340 two at once where the relay keeps two, each followed by the next a round trip (here
  // under a second: 1 s, the least lead) before its hold ends.
  const heldPulls = lanes * Math.ceil(DAY_S / (lanes > 1 ? holdS - 1 : holdS));
  // One held pull an hour (at most) is timed; the day's four posts are timed anyway.
  const timedPulls = Math.min(heldPulls, Math.ceil((DAY_S * 1000) / HELD_SAMPLE_EVERY_MS));
  const pollPulls = Math.ceil(DAY_S / INTERVAL_S);
  const poll = pollPull ? wire(pollPull) : { up: 0, down: 0 };
  // h2c: the connection's preface and settings once (it lives across the day's rounds), and what stream 0
  // carried during the day (window updates; a second connection's setup, had one been opened)
  const conn =
    h2tap && connAtStart
      ? {
          up: h2tap.setup.up + h2tap.connection.up - connAtStart.up,
          down: h2tap.setup.down + h2tap.connection.down - connAtStart.down,
        }
      : { up: 0, down: 0 };
  const result: DayResult = {
    bytesUp: dataUp + (heldPulls - timedPulls) * empty.up + timedPulls * emptyTimed.up + conn.up,
    bytesDown: dataDown + (heldPulls - timedPulls) * empty.down + timedPulls * emptyTimed.down + conn.down,
    requests: busyRequests + heldPulls,
    pollOnlyBytes: dataUp + dataDown + pollPulls * (poll.up + poll.down),
    floorBytes,
    floorBothWaysBytes,
    automergeSyncBytes,
    ...(h2tap ? { connectionBytes: conn.up + conn.down, connections: h2tap.connection.opened } : {}),
  };
  log(
    'siteDay',
    `day with ${Math.round(changeShare * 100)} % of cells changing per round${asDaemon ? `, pushed as the daemon does (sync.newsHoldS ${newsHoldS ?? 'default'})` : ''}${h2tap ? ', v2 on h2c' : ''}`,
    {
      ...result,
      pushes,
      holdS,
      lanes,
      heldPulls,
      emptyPull: empty,
      emptyTimedPull: emptyTimed,
      timedPulls,
      pollPull: poll,
      measuredRequests: measured.map(
        (x) => `${x.method} ${x.path.slice(0, 14)} ${wire(x).up}/${wire(x).down}`,
      ),
    },
  );
  const breakdown = BREAKDOWN
    ? [
        posts[0] && exchangeBreakdown('push', posts[0]),
        measured[1] && exchangeBreakdown('held pull answered with the ack', measured[1]),
        timedPull && exchangeBreakdown('empty held pull, timed (10 a day)', timedPull),
        last && exchangeBreakdown('empty held pull, untimed', last),
      ]
    : undefined;
  await h2tap?.close();
  await tap.close();
  store.close();
  await chain.close();
  return { ...result, pushes, ...(BREAKDOWN ? { breakdown, rounds } : {}) };
}

const quiet = await day(0, 7);
const busy = await day(0.05, 7);
if (BREAKDOWN) {
  // issue 46: the two days hopV2Budget rebuilds in v2, with their first round opened
  emit({ cells: CELLS, quiet, busy });
  process.exit(0);
}
const busyAsDaemon = await day(0.05, 7, true);
const busyNewsAtOnce = await day(0.05, 7, true, 0);
// `--wire=2`: the same days with v2 on h2c (issue 46), measured on the socket, beside HTTP/1.1's above
const h2cDays = WIRE2
  ? {
      quiet: await day(0, 7, false, undefined, true),
      busy: await day(0.05, 7, false, undefined, true),
      busyAsDaemon: await day(0.05, 7, true, undefined, true),
    }
  : null;
const rated = <D extends DayResult>(d: D) => ratedDay(d, TARIFF);
emit({
  cells: CELLS,
  wire: WIRE2 ? 2 : 1,
  tariffUsdPerMb: TARIFF,
  wholeConfirmations: WHOLE_CONFIRMATIONS,
  batched: BATCHED,
  onePerPlan: ONE_PER_PLAN,
  quiet: rated(quiet),
  busy: rated(busy),
  busyAsDaemon: rated(busyAsDaemon),
  busyNewsAtOnce: rated(busyNewsAtOnce),
  ...(h2cDays
    ? {
        h2c: {
          quiet: rated(h2cDays.quiet),
          busy: rated(h2cDays.busy),
          busyAsDaemon: rated(h2cDays.busyAsDaemon),
        },
      }
    : {}),
  pass: {
    quietWithin2xFloor: quiet.bytesUp + quiet.bytesDown <= 2 * quiet.floorBytes,
    // v2 where the upstream is `http:`: the agent's carrier is h2c (decision 495; issue 46's goal, decision 500)
    ...(h2cDays
      ? {
          quietH2cWithin2xFloor:
            h2cDays.quiet.bytesUp + h2cDays.quiet.bytesDown <= 2 * h2cDays.quiet.floorBytes,
        }
      : {}),
  },
});
process.exit(0);
