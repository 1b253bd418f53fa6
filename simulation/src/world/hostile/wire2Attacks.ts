import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { brotliDecompressSync } from 'node:zlib';
import { decodeBatch, decodeBundle, generateSigningKeyPair, wire2 } from '@driftline/protocol';
import type { Attack, HopRequest, HopResponse, RequestVerdict } from './hostileHandler.js';

/** Attacks on hop v2's messages (docs/decisions/495-hop-v2-on-the-agent-link.md); each counts what it did. */

const message = (body: Buffer) => wire2.decodeMessage(new Uint8Array(body));

/**
 * The agent's first `n` v2 pushes get one byte of their changes flipped on the way to the relay (their
 * signature no longer matches). `flipped` counts them.
 */
export function flippedPushes(n: number): Attack & { flipped: number } {
  const attack = {
    name: 'flipped v2 pushes',
    flipped: 0,
    onRequest(req: HopRequest): RequestVerdict {
      if (req.method !== 'POST' || req.path !== wire2.WIRE2_PATH || attack.flipped >= n) return undefined;
      const m = message(req.body);
      if (!m.ok || m.value.kind !== 'push') return undefined;
      attack.flipped++;
      const body = Buffer.from(req.body);
      body[body.length >> 1] = (body[body.length >> 1] ?? 0) ^ 0x01;
      return { forward: { ...req, body } };
    },
  };
  return attack;
}

/**
 * Every item of a v2 pull answer (the hub's acks, control) gets the last byte of its hub signature
 * flipped, ids and everything else kept. `altered` counts the copies.
 */
export function alteredPullAnswers(): Attack & { altered: number; lastAt: number } {
  const attack = {
    name: 'altered v2 pull answers',
    altered: 0,
    /** When it last altered an answer (epoch ms; 0: never). */
    lastAt: 0,
    onResponse(req: HopRequest, res: HopResponse): HopResponse | undefined {
      if (req.method !== 'POST' || req.path !== wire2.WIRE2_PATH || res.status !== 200) return undefined;
      const br = res.headers['content-encoding'] === 'br';
      const plain = new Uint8Array(br ? brotliDecompressSync(res.body) : res.body);
      const page = wire2.decodePullAnswer(plain);
      if (!page.ok || page.value.items.length === 0) return undefined;
      const items = page.value.items.map((b) => {
        const c = Uint8Array.from(b);
        c[c.length - 1] = (c[c.length - 1] ?? 0) ^ 0x5a;
        attack.altered++;
        return c;
      });
      attack.lastAt = Date.now();
      const { 'content-encoding': _e, ...headers } = res.headers;
      return { ...res, headers, body: Buffer.from(wire2.encodePullAnswer({ ...page.value, items })) };
    },
  };
  return attack;
}

/** The kind of a `POST /v2` request's message (null: not one). */
export function v2Kind(req: HopRequest): wire2.KindName | null {
  if (req.method !== 'POST' || req.path !== wire2.WIRE2_PATH) return null;
  const m = message(req.body);
  return m.ok ? m.value.kind : null;
}

/**
 * (h) on v2: holds every v2 pull open without a word until the agent lets go; pushes pass. `held` counts
 * the pulls it took, `open` those still open.
 */
export function silentV2Pulls(): Attack & { held: number; open: number } {
  const attack = {
    name: 'hold v2 pulls without a word',
    held: 0,
    open: 0,
    takeOverRead(req: HopRequest, out: ServerResponse): boolean {
      if (v2Kind(req) !== 'pull') return false;
      attack.held++;
      attack.open++;
      out.on('close', () => attack.open--);
      return true;
    },
  };
  return attack;
}

/**
 * (k) A hung relay: takes every request (pushes, probes, pulls, registrations) and never answers, the
 * connection left open. `held` counts them, `pushes` the v2 pushes and v1 batches among them.
 */
export function silentHop(): Attack & { held: number; pushes: number; open: number } {
  const attack = {
    name: 'take every request and never answer',
    held: 0,
    pushes: 0,
    open: 0,
    takeOverRead(req: HopRequest, out: ServerResponse): boolean {
      attack.held++;
      if (v2Kind(req) === 'push' || (req.method === 'POST' && req.path.startsWith('/v1/bundles')))
        attack.pushes++;
      attack.open++;
      out.on('close', () => attack.open--);
      return true;
    },
  };
  return attack;
}

/**
 * (i) on v2: answers every v2 pull at once with a 200 and then one byte every `everyMs` of a pull answer
 * that never ends in time. `dripped` counts the bytes sent, `cut` the answers the agent closed.
 */
export function dripV2Pulls(everyMs = 250): Attack & { answered: number; dripped: number; cut: number } {
  const attack = {
    name: `drip v2 pull answers a byte every ${everyMs} ms`,
    answered: 0,
    dripped: 0,
    cut: 0,
    takeOverRead(req: HopRequest, out: ServerResponse): boolean {
      if (v2Kind(req) !== 'pull') return false;
      attack.answered++;
      const body = Buffer.from(wire2.encodePullAnswer({ cursor: 1, items: [new Uint8Array(4096)] }));
      out.writeHead(200, { 'content-length': String(body.length) });
      let i = 0;
      const t = setInterval(() => {
        if (out.destroyed || i >= body.length) return clearInterval(t);
        out.write(body.subarray(i, ++i));
        attack.dripped++;
      }, everyMs);
      out.on('close', () => {
        clearInterval(t);
        if (i < body.length) attack.cut++;
      });
      return true;
    },
  };
  return attack;
}

/** A v2 pull answer's page (`[cursor, items, refusals?]`), plain, and whether it came brotli'd. */
function pullPage(res: HopResponse): { page: wire2.PullAnswer; br: boolean } | null {
  if (res.status !== 200 || res.body.length === 0) return null;
  const br = res.headers['content-encoding'] === 'br';
  const page = wire2.decodePullAnswer(new Uint8Array(br ? brotliDecompressSync(res.body) : res.body));
  return page.ok ? { page: page.value, br } : null;
}

/**
 * (d) on v2: every control bundle (plan requests, approvals) in a v2 pull answer is dropped, the cursor
 * kept, so the agent moves past what it never saw. `eaten` counts them.
 */
export function eatV2Control(): Attack & { eaten: number } {
  const attack = {
    name: 'eat control in v2 pull answers',
    eaten: 0,
    onResponse(req: HopRequest, res: HopResponse): HopResponse | undefined {
      if (v2Kind(req) !== 'pull') return undefined;
      const p = pullPage(res);
      if (!p) return undefined;
      const items = p.page.items.filter((b) => {
        const d = decodeBundle(b);
        const control = d.ok && d.value.header.kind === 'control';
        if (control) attack.eaten++;
        return !control;
      });
      if (items.length === p.page.items.length) return undefined;
      const { 'content-encoding': _e, ...headers } = res.headers;
      return { ...res, headers, body: Buffer.from(wire2.encodePullAnswer({ ...p.page, items })) };
    },
  };
  return attack;
}

/** The decoded v2 push a request carries (null: not one). */
function pushOf(req: HopRequest): wire2.DecodedMessage<'push'> | null {
  if (req.method !== 'POST' || req.path !== wire2.WIRE2_PATH) return null;
  const m = message(req.body);
  return m.ok && m.value.kind === 'push' ? (m.value as wire2.DecodedMessage<'push'>) : null;
}

/**
 * Fake custody (v1's fake receipts, on v2): answers every v2 push with a custody message of its own making
 * (addressed to the agent, `upTo` the push's sequence, a stamp of its times, signed by a key of its own)
 * and forwards nothing. `faked` counts them.
 */
export function fakeCustody(): Attack & { faked: number } {
  let key: Promise<CryptoKey> | null = null;
  const attack = {
    name: 'fake v2 custody',
    faked: 0,
    async onRequest(req: HopRequest): Promise<RequestVerdict> {
      const m = pushOf(req);
      if (!m) return undefined;
      key ??= generateSigningKeyPair().then((k) => k.privateKey);
      const now = Date.now();
      const custody = await wire2.encodeMessage(
        {
          kind: 'custody',
          // relay-1's short id, derived from its name as hop's wire2NodeId does (decision 495: anybody can),
          // so the agent takes it for relay-1's custody
          from: (createHash('sha256').update('relay-1').digest().readUInt16BE(0) % 65_535) + 1,
          to: m.from,
          seq: m.seq,
          body: { upTo: m.seq, ...(m.body.t0 !== undefined ? { stamp: [m.body.t0, now, now] } : {}) },
        },
        await key,
      );
      attack.faked++;
      return { answer: { status: 200, headers: {}, body: Buffer.from(custody) } };
    },
  };
  return attack;
}

/**
 * A hop that says "held" and drops: answers every v2 push asking its custody to come later (field 11,
 * `ackLater`: more of the round follows) with the bare 204 a node stating `custody-later` gives
 * (docs/decisions/530-custody-with-the-next-push.md), and forwards nothing. `dropped` counts them.
 */
export function droppedAckLaterPushes(): Attack & { dropped: number } {
  const attack = {
    name: 'drop v2 pushes of a round under way, answering 204',
    dropped: 0,
    onRequest(req: HopRequest): RequestVerdict {
      if (pushOf(req)?.body.ackLater === undefined) return undefined;
      attack.dropped++;
      return { answer: { status: 204, headers: {}, body: Buffer.alloc(0) } };
    },
  };
  return attack;
}

/** Keeps a copy of every v2 request (push or pull) to replay later; changes nothing. */
export function captureV2(): Attack & { sent: Array<{ kind: wire2.KindName; req: HopRequest }> } {
  const attack = {
    name: 'capture v2 messages',
    sent: [] as Array<{ kind: wire2.KindName; req: HopRequest }>,
    onRequest(req: HopRequest): RequestVerdict {
      const kind = v2Kind(req);
      if (kind) attack.sent.push({ kind, req });
      return undefined;
    },
  };
  return attack;
}

/** Holds every v2 push `holdMs` before it forwards it (a v2 push states no clock to restate). */
export function holdV2Pushes(holdMs: number): Attack & { held: number } {
  const attack = {
    name: `hold v2 pushes ${holdMs} ms`,
    held: 0,
    async onRequest(req: HopRequest): Promise<RequestVerdict> {
      if (!pushOf(req)) return undefined;
      await new Promise((r) => setTimeout(r, holdMs));
      attack.held++;
      return undefined;
    },
  };
  return attack;
}

/**
 * The first `n` v2 pushes that carry a heartbeat (decision 500) get one byte of the heartbeat's change
 * hash flipped, so the hub would rebuild another change if it took it. `flipped` counts them.
 */
export function flippedHeartbeats(n: number): Attack & { flipped: number } {
  const attack = {
    name: 'flipped v2 heartbeats',
    flipped: 0,
    onRequest(req: HopRequest): RequestVerdict {
      const hash = pushOf(req)?.body.heartbeat?.change;
      if (!hash || attack.flipped >= n) return undefined;
      const at = req.body.indexOf(Buffer.from(hash));
      if (at < 0) return undefined;
      attack.flipped++;
      const body = Buffer.from(req.body);
      body[at] = (body[at] ?? 0) ^ 0x01;
      return { forward: { ...req, body } };
    },
  };
  return attack;
}

/**
 * Once it has seen pushes from two agents, sends each push of one under the other's short id (`from`),
 * its signature kept: a hop naming another agent. `borrowed` counts them.
 */
export function borrowedFrom(): Attack & { borrowed: number } {
  const seen = new Set<number>();
  const attack = {
    name: "v2 pushes under another agent's short id",
    borrowed: 0,
    async onRequest(req: HopRequest): Promise<RequestVerdict> {
      const m = pushOf(req);
      if (!m) return undefined;
      seen.add(m.from);
      const other = [...seen].find((f) => f !== m.from);
      if (other === undefined) return undefined;
      const { kind, to, seq, body, signature } = m;
      const forged = await wire2.encodeMessageWith({ kind, from: other, to, seq, body }, () => signature);
      attack.borrowed++;
      return { forward: { ...req, body: Buffer.from(forged) } };
    },
  };
  return attack;
}

/** Whether `req` is a push: a v1 bundle post or a v2 push message. */
const isPush = (req: HopRequest) =>
  (req.method === 'POST' && req.path.startsWith('/v1/bundles')) || pushOf(req) !== null;

/**
 * Custody then drip (issue 59): every push is answered as `sit` answers it (custody it does not hold yet:
 * `fakeReceipts()` on v1, `fakeCustody()` on v2) and kept; the kept pushes go on by `send` (to the relay
 * the hop stands for) one every `everyMs`, oldest first: a hop that does forward, far too late. Nothing
 * else is touched. `taken` counts the pushes it answered, `dripped` those it sent on; `stop()` ends the drip.
 */
export function custodyThenDrip(
  sit: Attack,
  everyMs: number,
  send: (req: HopRequest) => Promise<unknown>,
): Attack & { taken: number; dripped: number; stop(): void } {
  const kept: HopRequest[] = [];
  let timer: ReturnType<typeof setTimeout> | null = null;
  const drip = () => {
    timer = null;
    const next = kept.shift();
    if (!next) return;
    attack.dripped++;
    void send(next).catch(() => undefined);
    if (kept.length > 0) timer = setTimeout(drip, everyMs);
  };
  const attack = {
    name: `take custody, forward one push every ${everyMs} ms`,
    taken: 0,
    dripped: 0,
    async onRequest(req: HopRequest): Promise<RequestVerdict> {
      if (!isPush(req)) return undefined;
      const verdict = await sit.onRequest?.(req);
      if (!verdict || !('answer' in verdict)) return verdict;
      attack.taken++;
      kept.push(req);
      timer ??= setTimeout(drip, everyMs);
      return verdict;
    },
    stop() {
      if (timer) clearTimeout(timer);
      timer = null;
      kept.length = 0;
    },
  };
  return attack;
}

/**
 * A relay that forwards only acks (issue 59): every push is answered as `sit` answers it (custody, and
 * nothing forwarded: `fakeReceipts()` on v1, `fakeCustody()` on v2); every other exchange passes both
 * ways, so the agent's pulls go up and the hub's acks (of what the hop forwarded before, or of what came
 * by another way) and control come down through it: the path looks alive. `acks` counts the hub acks it
 * passed down, `pulls` the pull answers.
 */
export function acksOnly(sit: Attack): Attack & { acks: number; pulls: number } {
  const ackItem = (b: Uint8Array) => {
    const m = wire2.decodeMessage(b);
    if (m.ok) return m.value.kind === 'ack';
    const d = decodeBundle(b);
    return d.ok && d.value.header.kind === 'ack';
  };
  const attack = {
    name: 'custody of every push, forward none; pass pulls and acks',
    acks: 0,
    pulls: 0,
    onRequest(req: HopRequest): RequestVerdict | Promise<RequestVerdict> {
      return isPush(req) ? sit.onRequest?.(req) : undefined;
    },
    onResponse(req: HopRequest, res: HopResponse): undefined {
      let items: Uint8Array[] = [];
      if (v2Kind(req) === 'pull') items = pullPage(res)?.page.items ?? [];
      else if (req.method === 'GET' && req.path.startsWith('/v1/bundles?') && res.status === 200) {
        const br = res.headers['content-encoding'] === 'br';
        const batch = decodeBatch(new Uint8Array(br ? brotliDecompressSync(res.body) : res.body));
        items = batch.ok ? batch.value : [];
      } else return undefined;
      attack.pulls++;
      attack.acks += items.filter(ackItem).length;
      return undefined;
    },
  };
  return attack;
}
