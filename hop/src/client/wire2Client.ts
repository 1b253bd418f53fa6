import { type Progress, readCapped, readCappedText, wire2 } from '@driftline/protocol';
import type { ExchangeTimes } from './exchangeTimes.js';
import type { PlainInit } from './plainRequest.js';
import { answered, failure, type HopResult, safeJson, thrown } from './result.js';
import type { Wire2Carrier } from './wire2Carrier.js';

/** What a hop client lends its v2 exchanges: its transport, its signals and its exchange times. */
export interface Wire2Transport {
  url: string;
  /** HTTP/1.1 or h2c (`Wire2Carrier`), answering as a web `Response`. */
  transport: { request(url: string, init: PlainInit): Promise<Response> };
  times: ExchangeTimes;
  /** Most bytes of an answer read (the client's `maxResponseBytes`, as v1's pages). */
  maxBytes: number;
  now(): number;
  signal(extra?: AbortSignal): AbortSignal;
  /** Called once the answer's head came: a pull's deadline for an answer to begin ends there. */
  begun?(): void;
  /** How a pull's answer body must progress (`stallMs`); absent: only the request timeout. */
  progress?: Progress;
}

/**
 * One v2 exchange (`POST /v2`, docs/decisions/495-hop-v2-on-the-agent-link.md): the signed message and its
 * length, nothing else on the request (no content type, no bearer token). Answers the status (200 with a body, 204
 * without) and the body; an error status is a failure as v1's. A `custody` answer's stamp is a clock
 * sample, as v1's timed exchanges are.
 */
export async function exchangeWire2(
  t: Wire2Transport,
  message: Uint8Array,
  signal?: AbortSignal,
): Promise<HopResult<{ status: number; body: Uint8Array }>> {
  try {
    const m0 = performance.now();
    const res = await t.transport.request(`${t.url}${wire2.WIRE2_PATH}`, {
      method: 'POST',
      // no content type, no token: the body is a signed message and nothing else
      headers: {},
      body: message,
      signal: t.signal(signal),
    });
    const t3 = t.now();
    const m3 = performance.now();
    const elapsed = m3 - m0;
    t.begun?.();
    if (!res.ok) return answered(res.status, await readCappedText(res, 64 * 1024));
    const read = await readCapped(res, t.maxBytes, t.progress);
    if (!read.ok)
      return read.stalled
        ? failure('stalled', `${t.url}: ${read.reason}`, true)
        : failure('bad-answer', `the v2 answer: ${read.reason}`, true);
    const body = read.bytes;
    // a custody stamp [t0, t1, t2] is this exchange's clock sample; other answers are only a round trip
    t.times.recordTimes(wire2.isWire2Message(body) ? custodyStamp(body) : null, t3, elapsed, m3);
    return { ok: true, value: { status: res.status, body } };
  } catch (e) {
    return thrown(e);
  }
}

function custodyStamp(body: Uint8Array): [number, number, number] | null {
  const d = wire2.decodeMessage(body);
  return d.ok && d.value.kind === 'custody' ? (d.value.body.stamp ?? null) : null;
}

/** The answer to `POST /v1/peer/wire2`: the node's v2 info, or a failure when it is not one. */
export async function readWire2Info(res: Response): Promise<HopResult<wire2.Wire2Info>> {
  const read = await readCappedText(res, 64 * 1024);
  const parsed = wire2.Wire2InfoSchema.safeParse(read.ok ? safeJson(read.text) : null);
  if (!parsed.success)
    return failure('bad-answer', 'upstream answered the v2 registration with no v2 info', true);
  return { ok: true, value: parsed.data };
}

/**
 * `POST /v1/peer/wire2` by `request` (the client's, with its token): registers the agent's key; saying it
 * reads `h2c` where its carrier may use it (an older agent's strict schema would refuse the field), and
 * telling the carrier what the upstream stated.
 */
export async function registerWire2(
  request: (path: string, init: PlainInit) => Promise<HopResult<Response>>,
  carrier: Wire2Carrier,
  reg: wire2.Wire2Registration,
): Promise<HopResult<wire2.Wire2Info>> {
  // `0`: no h2c, but this agent reads the answer leniently, so the node may state more (`carries`)
  const h2c = { [wire2.WIRE2_H2C_HEADER]: carrier.asks() ? '1' : '0' };
  const r = await request(wire2.WIRE2_REGISTER_PATH, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...h2c },
    body: JSON.stringify(reg),
  });
  const info = r.ok ? await readWire2Info(r.value) : r;
  if (info.ok) carrier.noteStated(info.value.h2c === true);
  return info;
}
