import type { Http2ServerResponse, ServerStreamResponseOptions } from 'node:http2';
import { asSiteId, fromBase64, publicKeyFromText, verifyBytes, WireError, wire2 } from '@driftline/protocol';
import type { Context } from 'koa';
import { actsFor } from '../core/scope.js';
import type { HopBackend, Peer } from '../ports/HopBackend.js';
import type { Wire2Backend, Wire2Sender } from '../ports/Wire2Backend.js';
import { compressBatch } from '../wire/compress.js';
import { LEGACY_MAX_HOLD_S, lastAnswer, waitHeld } from './heldPull.js';
import { readJsonBody, readLimitedBody } from './readBody.js';
import type { HopRouteDeps } from './routeDeps.js';

/** Most JSON read from a registration. */
const MAX_REGISTRATION_BYTES = 4096;
/** Downlink items one pull answer carries at most (v1's default page). */
const PULL_LIMIT = 100;

function wire2Of(backend: HopBackend): Wire2Backend {
  // a relay whose upstream does not speak v2 stops too: the pushes it carried would be refused there
  if (!backend.wire2 || backend.wire2.speaking?.() === false)
    throw new WireError(
      'not-found',
      `${backend.role} '${backend.name}' does not speak hop v2 (now): speak v1`,
    );
  return backend.wire2;
}

/**
 * `POST /v1/peer/wire2` (peer token): the agent names itself and its key; the answer says this node speaks
 * v2 and gives the short ids (docs/decisions/495-hop-v2-on-the-agent-link.md). A node without v2 answers 404
 * and the agent stays on v1.
 */
export async function registerWire2(d: HopRouteDeps, ctx: Context): Promise<void> {
  const w = wire2Of(d.backend);
  const peer = ctx.state.peer as Peer;
  const reg = await readJsonBody(ctx.req, MAX_REGISTRATION_BYTES, wire2.Wire2RegistrationSchema, {
    notJson: 'the registration is not JSON: send {site, agent, publicKey, proof}',
    mismatch: 'the registration is not {site, agent, publicKey, proof}',
  });
  if (!actsFor(peer, reg.site))
    throw new WireError('forbidden', `peer '${peer.name}' does not act for site '${reg.site}'`);
  // the registrant holds the key it names (it signed the registration with it)
  const key = await publicKeyFromText(reg.publicKey).catch(() => null);
  if (!key) throw new WireError('bad-request', 'publicKey is not an ed25519:… public key');
  if (!(await verifyBytes(key, fromBase64(reg.proof), wire2.registrationBytes(reg)).catch(() => false)))
    throw new WireError(
      'bad-signature',
      "the registration's proof does not verify with its publicKey: sign {site, agent, publicKey} with the agent's own key",
    );
  const from = await w.register(peer, reg);
  // a registration (with the token) starts the sender's sequences afresh: an agent that lost its state
  // file numbers from 1 again; a replayed old message is idempotent anyway (decision 490)
  d.windows.forget(from);
  const lenient = ctx.get(wire2.WIRE2_H2C_HEADER);
  const carries = statedBy(w, 'carries');
  const pushForms = statedBy(w, 'pushForms');
  const info: wire2.Wire2Info = {
    wire: [1, 2],
    from,
    node: w.nodeId,
    maxHoldS: d.backend.maxHoldS ?? LEGACY_MAX_HOLD_S,
    keep: d.backend.keepHeld ?? 1,
    // only to an agent that said it reads it: an older one's strict schema refuses a field it does not know
    ...(d.h2c && lenient === '1' ? { h2c: true } : {}),
    // the hub's v2 messages this node carries down (decision 505), to an agent that reads leniently
    ...(lenient && carries.length > 0 ? { carries } : {}),
    // the compact push forms every node to the hub reads (decision 510), likewise
    ...(lenient && pushForms.length > 0 ? { pushForms } : {}),
  };
  ctx.set('cache-control', 'no-store');
  ctx.body = info;
}

/**
 * What a node states in its answers (`GET /v1/peer`, a v2 registration): the hub's v2 messages besides acks
 * it carries down (`carries`, decision 505), the compact push forms every node to the hub reads
 * (`pushForms`, decision 510). None where it says nothing.
 */
export function statedBy(w: Wire2Backend | null | undefined, what: 'carries' | 'pushForms'): string[] {
  return [...(w?.[what]?.() ?? [])];
}

/**
 * `POST /v2` (no bearer token: the message is signed by its sender's registered key): one hop v2 message
 * (decision 490). A `push` goes to the node's `accept` as it came, and is answered with this node's signed
 * `custody` (with the exchange's stamp when the push asked), or 204 when more of its round follows
 * (`ackLater`, decision 530); a `pull` reads the site's downlink after `have`,
 * held up to `holdS` while nothing is due, and is answered `[cursor, items]` or 204.
 */
export async function postWire2(d: HopRouteDeps, ctx: Context): Promise<void> {
  const w = wire2Of(d.backend);
  const t1 = d.now();
  // every byte counts on this route (decision 495): no Date line; the time is in the stamp when asked
  ctx.res.sendDate = false;
  const bytes = await readLimitedBody(ctx.req, wire2.MAX_MESSAGE_BYTES);
  const decoded = wire2.decodeMessage(bytes);
  if (!decoded.ok) throw new WireError(decoded.error.code, decoded.error.message);
  const m = decoded.value;
  const sender = await w.sender(m.from);
  if (!sender)
    throw new WireError(
      'unauthorized',
      `sender ${m.from} has no live registration here (an unknown key, or the token that registered it was revoked): register again with a live token (POST ${wire2.WIRE2_REGISTER_PATH})`,
    );

  if (!(await wire2.verifyMessage(m, sender.key)))
    throw new WireError(
      'bad-signature',
      `the message does not verify with the key registered for sender ${m.from}`,
    );
  d.metrics.bytesIn.inc({ peer: sender.peer.name }, bytes.length);
  d.metrics.wire2Messages.inc({ kind: m.kind, peer: sender.peer.name });
  if (m.kind === 'push') return push(d, w, sender, m as wire2.DecodedMessage<'push'>, t1, ctx);
  if (m.kind === 'pull') {
    if (m.to !== w.nodeId)
      throw new WireError('bad-request', `the pull is for node ${m.to}; this is node ${w.nodeId}`);
    d.windows.accept(m.from, m.seq);
    return pull(d, sender, m as wire2.DecodedMessage<'pull'>, ctx);
  }
  throw new WireError('bad-request', `a node takes push and pull messages from agents, not ${m.kind}`);
}

async function push(
  d: HopRouteDeps,
  w: Wire2Backend,
  sender: Wire2Sender,
  m: wire2.DecodedMessage<'push'>,
  t1: number,
  ctx: Context,
): Promise<void> {
  if (m.to !== wire2.HUB_NODE_ID)
    throw new WireError('bad-request', `a push goes to the hub (0), not ${m.to}`);
  // the agent's clock term (field 10), composed into the push's source clock as v1's `driftline-clock`
  const clocks = d.peerClocks.ofPush(`${sender.site}/${sender.agent}`, m.body.clock);
  const [receipt] = await d.backend.accept(sender.peer, [m.bytes], clocks);
  if (!receipt || receipt.status === 'rejected')
    throw new WireError(
      receipt?.code ?? 'bad-request',
      receipt?.message ?? 'the push was not taken (no receipt): send it again',
    );
  // More of the round follows (field 11): held, and said so by a bare 204 where this node states
  // `custody-later` (the agent reads the 204 only then); the custody of the round's next push covers it,
  // `upTo` being cumulative (docs/decisions/530-custody-with-the-next-push.md)
  if (m.body.ackLater !== undefined && statedBy(w, 'pushForms').includes(wire2.PUSH_FORM_CUSTODY_LATER)) {
    ctx.status = 204;
    return;
  }
  // A push carries every change since the hub's last ack: custody of push N is custody of what every
  // earlier push carried that the hub has not acknowledged (docs/decisions/495-hop-v2-on-the-agent-link.md).
  const t0 = m.body.t0;
  const answer = await wire2.encodeMessageWith(
    {
      kind: 'custody',
      from: w.nodeId,
      to: m.from,
      seq: m.seq,
      body: {
        upTo: m.seq,
        ...(t0 !== undefined ? { stamp: [t0, t1, d.now()] as [number, number, number] } : {}),
      },
    },
    (data) => w.sign(data),
  );
  sendBare(ctx, answer);
  d.metrics.bytesOut.inc({ peer: sender.peer.name }, answer.length);
}

async function pull(
  d: HopRouteDeps,
  sender: Wire2Sender,
  m: wire2.DecodedMessage<'pull'>,
  ctx: Context,
): Promise<void> {
  const { backend } = d;
  const q = { for: asSiteId(sender.site), after: String(m.body.have), limit: PULL_LIMIT };
  let page = await backend.downlink(sender.peer, q);
  const holdS = Math.min(m.body.holdS, backend.maxHoldS ?? LEGACY_MAX_HOLD_S);
  const holder = { peer: `${sender.peer.name}\n${sender.agent}` };
  // a pull sent before the holder's last answer reached it is held as one that found nothing, so one of
  // its pulls still waits here for what comes next (decision 340, as v1's)
  const last = lastAnswer(backend, q.for, holder.peer);
  const repeat = last.repeats(page);
  if ((page.bundles.length === 0 || repeat) && holdS > 0 && backend.waitForDownlink) {
    if (repeat) last.heldRepeat();
    // a revoked token cuts the held pulls of the keys it registered at once (decision 411)
    const credential = `wire2:${m.from}`;
    const held = await waitHeld(backend, ctx, sender.site, holdS * 1000, holder, d.credentials, credential);
    if (held.revoked)
      throw new WireError('unauthorized', 'the sender’s token was revoked while its pull was held');
    // what goes if nothing new comes: nothing, at the pull's own cursor
    if (repeat) page = { bundles: [], cursor: q.after };
    if (held.end !== 'superseded' && !held.gone) {
      const now = await backend.downlink(sender.peer, q);
      if (!last.repeats(now)) page = now;
      // revoked between two checks: nothing goes to it
      if (page.bundles.length > 0 && d.credentials && !(await d.credentials.live(credential)))
        throw new WireError('unauthorized', 'the sender’s token was revoked while its pull was held');
    }
  }
  last.answered(page);
  const refusals = backend.refusalsFor?.(sender.site) ?? [];
  if (page.bundles.length === 0 && refusals.length === 0) {
    ctx.status = 204;
    return;
  }
  let answer: Uint8Array = wire2.encodePullAnswer({
    cursor: Number(page.cursor),
    items: page.bundles,
    ...(refusals.length > 0 ? { refusals: JSON.stringify(refusals) } : {}),
  });
  // brotli when it pays for its `Content-Encoding: br` line, as v1's pages (decision 380)
  const compressed = compressBatch(answer);
  if (compressed.length + 24 < answer.length) {
    answer = compressed;
    ctx.set('Content-Encoding', 'br');
  }
  sendBare(ctx, answer);
  d.metrics.bytesOut.inc({ peer: sender.peer.name }, answer.length);
}

/**
 * Sends a v2 answer with no head but its length (and `Content-Encoding` when set): both ends know what a
 * `/v2` answer is, so Koa's `Content-Type` would be ~40 bytes a message for nothing (decision 495).
 */
function sendBare(ctx: Context, body: Uint8Array): void {
  ctx.status = 200;
  ctx.respond = false;
  if (ctx.req.httpVersionMajor === 2) {
    // h2c: the stream's end says where the body ends (no length), and it ends with the body's own DATA
    // frame: the compat response would send an empty one after it, 9 bytes an answer (decision 505)
    const encoding = ctx.response.get('Content-Encoding');
    const stream = (ctx.res as unknown as Http2ServerResponse).stream;
    stream.respond({ ':status': 200, ...(encoding ? { 'content-encoding': encoding } : {}) }, {
      endStream: false,
      sendDate: false,
    } as ServerStreamResponseOptions);
    stream.end(body);
    return;
  }
  ctx.res.statusCode = 200;
  ctx.res.setHeader('content-length', body.length);
  ctx.res.end(body);
}
