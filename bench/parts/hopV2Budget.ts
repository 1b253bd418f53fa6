/**
 * hopV2Budget (issue 46, docs/decisions/490-hop-v2-wire-format.md): what siteDay's quiet and busy days cost
 * in hop v2 messages, beside v1 and the floor measured in the same run.
 *
 * 1. v1: `siteDay.ts --breakdown` runs the quiet day (200 cells, 4 rounds, nothing changed) and the busy one
 *    (5 % of cells change per round) through the real agent, relay and hub, counting every byte as siteDay
 *    does, and hands on each round's facts and pushed Automerge changes, and its first round opened.
 * 2. v2: the same rounds as v2 messages (protocol `wire2`), signed by an agent, a relay and a hub key, the
 *    same exchanges as siteDay counts (a push and the held pull that brings the ack per round, and the
 *    day's 10 held pulls between rounds, timed as v1's are) sent to a server on 127.0.0.1 port 0 that
 *    decodes, verifies and answers each as a relay would (custody, the hub's ack, a stamp), through a TCP
 *    proxy that counts every byte on the socket. Carriers: HTTP/1.1 with minimal heads, h2c on one
 *    connection for the day, and h2c with a fresh connection per round.
 * Quiet rounds go as a heartbeat (`quiet`) and, for comparison, as the round's Automerge change in a v2
 * push (`quietAsChanges`); busy rounds carry the round's Automerge change (brotli).
 */
import { brotliCompressSync } from 'node:zlib';
import { generateSigningKeyPair, wire2 } from '@driftline/protocol';
import { startByteProxy } from '../lib/byteProxy.js';
import { lastJsonLine, runTs } from '../lib/child.js';
import { connectV2, serveV2 } from '../lib/v2Carriers.js';

const { cellListDigest, decodeMessage, encodeHeartbeat, encodeMessage, messageTip, verifyMessage } = wire2;

interface Round {
  cells: { at: number; changed: boolean }[];
  changes: string[];
}
interface V1Day {
  bytesUp: number;
  bytesDown: number;
  requests: number;
  floorBytes: number;
  floorBothWaysBytes: number;
  rounds: Round[];
  breakdown: unknown[];
}

const HOLD_S = 21_600;
/** The day's empty held pulls between rounds, as siteDay counts them (two lanes, 6 h holds), per round. */
const EMPTY_PULLS = [3, 3, 2, 2];
const AGENT = 7;
const RELAY = 3;
const HUB = 0;

const v1 = lastJsonLine((await runTs('bench/parts/siteDay.ts', ['--breakdown'], 5 * 60_000)).stdout) as {
  cells: number;
  quiet: V1Day;
  busy: V1Day;
};
const keys = {
  agent: await generateSigningKeyPair(),
  relay: await generateSigningKeyPair(),
  hub: await generateSigningKeyPair(),
};
const cellKeys = Array.from({ length: v1.cells }, (_, i) => `prod/component-${String(i).padStart(3, '0')}`);
const list = await cellListDigest(cellKeys);

type Form = 'heartbeat' | 'changes';
/**
 * Which exchanges ask for a clock stamp: `hourly`, v1's rule (a held pull when the last sample is an hour
 * old: all the day's 10 empty pulls, 6 h apart; the pushes too); `withPush`: only each round's push, the
 * empty held pulls then answered with an empty body.
 */
type Stamps = 'hourly' | 'withPush';
/** The push of one round: unchanged cells as a heartbeat (quiet rounds), else the round's Automerge change. */
function pushBody(round: Round, form: Form): wire2.PushBody {
  if (form === 'heartbeat' && round.cells.every((c) => !c.changed))
    return {
      epoch: 1,
      heartbeat: encodeHeartbeat(
        list,
        round.cells.map((c, index) => ({ index, at: c.at })),
      ),
    };
  const raw = Buffer.concat(round.changes.map((c) => Buffer.from(c, 'base64')));
  return { epoch: 1, changes: new Uint8Array(brotliCompressSync(raw)), changesEncoding: 'br' };
}

/** The relay (and, behind it, the hub) in miniature: verifies each message, answers as v2 says. */
function relay() {
  let pushedUpTo = 0;
  let downSeq = 0;
  let custodySeq = 0;
  let pendingAck: Uint8Array | null = null;
  let window = wire2.EMPTY_WINDOW;
  let pullWindow = wire2.EMPTY_WINDOW;
  return async (bytes: Uint8Array): Promise<Uint8Array> => {
    const t1 = Date.now();
    const d = decodeMessage(bytes);
    if (!d.ok) throw d.error;
    if (!(await verifyMessage(d.value, keys.agent.publicKey))) throw new Error('bad signature');
    const m = d.value;
    const seen = wire2.acceptSeq(m.kind === 'push' ? window : pullWindow, m.seq);
    if (!seen.ok) throw new Error(seen.detail);
    if (m.kind === 'push') window = seen.window;
    else pullWindow = seen.window;
    if (m.kind === 'push') {
      pushedUpTo = m.seq;
      // the hub commits and acks all up to this push, once, on the site's downlink
      pendingAck = await encodeMessage(
        {
          kind: 'ack',
          from: HUB,
          to: AGENT,
          seq: ++downSeq,
          body: {
            upTo: m.seq,
            tip: await messageTip(m.signature),
            committedAt: Date.now(),
            readsConfirmed: true,
          },
        },
        keys.hub.privateKey,
      );
      const p0 = m.body.t0;
      return encodeMessage(
        {
          kind: 'custody',
          from: RELAY,
          to: AGENT,
          seq: ++custodySeq,
          body: { upTo: pushedUpTo, ...(p0 !== undefined ? { stamp: [p0, t1, Date.now()] } : {}) },
        },
        keys.relay.privateKey,
      );
    }
    if (m.kind !== 'pull') throw new Error(`unexpected ${m.kind}`);
    if (pendingAck && m.body.have < downSeq) {
      const ack = pendingAck;
      pendingAck = null;
      return ack;
    }
    const t0 = m.body.t0;
    // nothing due and no stamp asked: an empty answer (a relay can always withhold; signing it proves nothing)
    if (t0 === undefined) return new Uint8Array();
    return encodeMessage(
      {
        kind: 'custody',
        from: RELAY,
        to: AGENT,
        seq: ++custodySeq,
        body: { upTo: pushedUpTo, stamp: [t0, t1, Date.now()] },
      },
      keys.relay.privateKey,
    );
  };
}

/** One day of v2 exchanges over a carrier: bytes on the socket, each way, and the messages alone. */
async function v2Day(day: V1Day, form: Form, stamps: Stamps, kind: 'http1' | 'h2c', perRound: boolean) {
  const server = await serveV2(kind, relay());
  const proxy = await startByteProxy(server.port);
  let conn = connectV2(kind, proxy.port);
  let pushSeq = 0;
  let pullSeq = 0;
  let have = 0;
  let messages = 0;
  let requests = 0;
  const exchange = async (m: wire2.Message) => {
    const bytes = await encodeMessage(m, keys.agent.privateKey);
    const answer = await conn.send(bytes);
    messages += bytes.length + answer.length;
    requests++;
    const a = answer.length > 0 ? decodeMessage(answer) : null;
    if (a && !a.ok) throw a.error;
    if (a?.ok && a.value.kind === 'ack') {
      if (!(await verifyMessage(a.value, keys.hub.publicKey))) throw new Error('ack not the hub’s');
      have = a.value.seq;
    }
    return a?.ok ? a.value : null;
  };
  for (const [r, round] of day.rounds.entries()) {
    if (perRound && r > 0) {
      await conn.close();
      conn = connectV2(kind, proxy.port);
    }
    const body = { ...pushBody(round, form), t0: Date.now() };
    const custody = await exchange({ kind: 'push', from: AGENT, to: HUB, seq: ++pushSeq, body });
    if (custody?.kind !== 'custody') throw new Error('the push got no custody');
    const ack = await exchange({
      kind: 'pull',
      from: AGENT,
      to: RELAY,
      seq: ++pullSeq,
      body: { have, holdS: HOLD_S },
    });
    if (ack?.kind !== 'ack') throw new Error('the held pull brought no ack');
    for (let i = 0; i < (EMPTY_PULLS[r] ?? 0); i++)
      await exchange({
        kind: 'pull',
        from: AGENT,
        to: RELAY,
        seq: ++pullSeq,
        body: { have, holdS: HOLD_S, ...(stamps === 'hourly' ? { t0: Date.now() } : {}) },
      });
  }
  await conn.close();
  await new Promise((r) => setTimeout(r, 50)); // the last frames (GOAWAY) reach the proxy
  const c = proxy.take();
  await proxy.close();
  await server.close();
  const bytes = c.up + c.down;
  return {
    bytesUp: c.up,
    bytesDown: c.down,
    bytes,
    connections: c.connections,
    requests,
    messageBytes: messages,
    vsFloor: +(bytes / day.floorBytes).toFixed(2),
    vsFloorBothWays: +(bytes / day.floorBothWaysBytes).toFixed(2),
  };
}

async function v2All(day: V1Day, form: Form, stamps: Stamps = 'hourly') {
  return {
    http1: await v2Day(day, form, stamps, 'http1', false),
    h2One: await v2Day(day, form, stamps, 'h2c', false),
    h2PerRound: await v2Day(day, form, stamps, 'h2c', true),
  };
}

const v1Figures = (d: V1Day) => {
  const bytes = d.bytesUp + d.bytesDown;
  return {
    bytes,
    requests: d.requests,
    floorBytes: d.floorBytes,
    floorBothWaysBytes: d.floorBothWaysBytes,
    vsFloor: +(bytes / d.floorBytes).toFixed(2),
  };
};
const quiet = await v2All(v1.quiet, 'heartbeat');
const quietAsChanges = await v2All(v1.quiet, 'changes');
const busy = await v2All(v1.busy, 'heartbeat');
const quietStampsWithPush = await v2All(v1.quiet, 'heartbeat', 'withPush');
const busyStampsWithPush = await v2All(v1.busy, 'heartbeat', 'withPush');
process.stderr.write(`[bench:hopV2Budget] v1 quiet round opened ${JSON.stringify(v1.quiet.breakdown)}\n`);
process.stdout.write(
  `${JSON.stringify({
    cells: v1.cells,
    v1: { quiet: v1Figures(v1.quiet), busy: v1Figures(v1.busy) },
    v2: { quiet, quietAsChanges, busy, quietStampsWithPush, busyStampsWithPush },
    // the decided configuration (docs/decisions/490): stamps with pushes, h2c on one connection
    pass: {
      quietWithin2xFloor: quietStampsWithPush.h2One.bytes <= 2 * v1.quiet.floorBytes,
      quietHttp1Within2xFloor: quietStampsWithPush.http1.bytes <= 2 * v1.quiet.floorBytes,
      quietStampsAsV1Within2xFloor: quiet.h2One.bytes <= 2 * v1.quiet.floorBytes,
    },
  })}\n`,
);
process.exit(0);
