import { z } from 'zod';
import { fromBase64, toBase64Url } from './bytes.js';
import { DRIFT_PER_MS, exchangeSample } from './clock.js';

/**
 * The signed per-hop timing chain (docs/decisions/290-signed-hop-chain.md, designed in 230 §4).
 *
 * - A **stamp**: a hop that serves an exchange signs the client's send time `t0` with its own `t1`, `t2`
 *   (`driftline-stamp` answer header: `<its key> <signature>`). A hop in between cannot change them
 *   without the signature failing; all it can do is delay, which the round trip then shows.
 * - A **custody record**: the agent, and each relay that took the bundles, signs its own exchange with
 *   its next hop (the four times and that hop's stamp) and the bundles it covers. The records travel in
 *   `driftline-custody` (`<base64url JSON>.<base64url signature>`, comma-separated). Each term of the
 *   clock composition (070) is then signed by the party that measured it and stamped by the one it
 *   measured against; the hub adds the terms itself.
 */

/** Answer header: the server's signature over the client's `t0` and its own `t1`, `t2`. */
export const STAMP_HEADER = 'driftline-stamp';
/** Request header of `POST /v1/bundles`: the custody records of the batch's bundles. */
export const CUSTODY_HEADER = 'driftline-custody';
/** Longest `driftline-custody` value a sender writes (as `driftline-source-clocks`): records past it are left out. */
export const MAX_CUSTODY_CHARS = 6 * 1024;
/** Most records a receiver reads from one header. */
export const MAX_CUSTODY_RECORDS = 32;

const KEY = /^ed25519:[A-Za-z0-9_-]{43}$/;
const SIG = /^[A-Za-z0-9_-]{86}$/;
const enc = new TextEncoder();

/** The bytes a hop signs for one exchange it served. */
export function stampBytes(t0: number, t1: number, t2: number): Uint8Array {
  return enc.encode(`driftline-stamp/1 ${t0} ${t1} ${t2}`);
}

/** `driftline-stamp`'s value: the signer's public key and its signature over {@link stampBytes}. */
export function formatStamp(keyText: string, signature: Uint8Array): string {
  return `${keyText} ${toBase64Url(signature)}`;
}

/** Reads `driftline-stamp`; null when absent or malformed (an older server stamps nothing). */
export function parseStamp(text: string | null | undefined): { by: string; sig: string } | null {
  const [by, sig, more] = (text ?? '').trim().split(' ');
  return by && sig && more === undefined && KEY.test(by) && SIG.test(sig) ? { by, sig } : null;
}

/** One exchange as its client saw it (`t`: t0, t1, t2, t3) with the server's stamp of t0, t1, t2. */
export interface StampedExchange {
  t: [number, number, number, number];
  /** The stamping server's public key (`ed25519:…`). */
  by: string;
  sig: string;
}

const TimeSchema = z.number().int().nonnegative().max(1e15);
const StampedExchangeSchema = z.object({
  t: z.tuple([TimeSchema, TimeSchema, TimeSchema, TimeSchema]),
  by: z.string().regex(KEY),
  sig: z.string().regex(SIG),
});

/** A bundle as a record names it: the first 128 bits of its sha256, base64url (its id is in its signed bytes). */
export async function bundleRef(bytes: Uint8Array): Promise<string> {
  const d = await globalThis.crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>);
  return toBase64Url(new Uint8Array(d).slice(0, 16));
}

export const CustodyRecordSchema = z.object({
  v: z.literal(1),
  /** `agent`: the bundles' source; `relay`: a relay that took them. */
  role: z.enum(['agent', 'relay']),
  /** The agent's `site/agent`, or the relay's public key. */
  signer: z.string().min(3).max(200),
  /** The signer's clock when it signed (ages `up` at 15 ppm). */
  at: TimeSchema,
  /** The signer's exchange with its next hop (the term signer − next hop); null before it has one. */
  up: StampedExchangeSchema.nullable(),
  /** The agent's clock is disciplined (`clock: trusted`): not to be corrected. */
  trusted: z.literal(true).optional(),
  /** Relay: when it took the bundles and how long it held them before this post (its own clock). */
  tookAt: TimeSchema.optional(),
  residenceMs: z.number().int().nonnegative().max(1e13).optional(),
  bundles: z
    .array(z.string().regex(/^[A-Za-z0-9_-]{22}$/))
    .min(1)
    .max(512),
});
export type CustodyRecord = z.infer<typeof CustodyRecordSchema>;

/** `<base64url JSON>.<base64url signature>`: `sign` signs exactly the JSON's bytes. */
export async function signCustodyRecord(
  record: CustodyRecord,
  sign: (data: Uint8Array) => Uint8Array | Promise<Uint8Array>,
): Promise<string> {
  const payload = enc.encode(JSON.stringify(record));
  return `${toBase64Url(payload)}.${toBase64Url(await sign(payload))}`;
}

/** One record as read: the fields, and the bytes its signature must cover. */
export interface ReadRecord {
  record: CustodyRecord;
  payload: Uint8Array;
  sig: Uint8Array;
}

/** Reads one record; null when it is not one (too long, not base64url, not the schema). */
export function readCustodyRecord(text: string): ReadRecord | null {
  if (text.length > MAX_CUSTODY_CHARS) return null;
  const m = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{86})$/.exec(text.trim());
  if (!m?.[1] || !m[2]) return null;
  try {
    const payload = fromBase64(m[1]);
    const parsed = CustodyRecordSchema.safeParse(JSON.parse(new TextDecoder().decode(payload)));
    return parsed.success ? { record: parsed.data, payload, sig: fromBase64(m[2]) } : null;
  } catch {
    return null;
  }
}

/** The header value for `records`, at most `maxChars` long: records that do not fit are left out. */
export function formatCustody(records: readonly string[], maxChars = MAX_CUSTODY_CHARS): string {
  const out: string[] = [];
  let length = 0;
  for (const r of records) {
    if (length + r.length + 1 > maxChars) continue;
    length += r.length + 1;
    out.push(r);
  }
  return out.join(',');
}

/** The raw records of a `driftline-custody` value, at most `max`, each still unread. */
export function parseCustody(text: string | null | undefined, max = MAX_CUSTODY_RECORDS): string[] {
  if (!text) return [];
  return text
    .slice(0, 4 * MAX_CUSTODY_CHARS)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .slice(0, max);
}

/** The clock term one stamped exchange gives (client − server), aged at 15 ppm to `at`; null if impossible. */
export function exchangeTerm(x: StampedExchange, at: number) {
  const s = exchangeSample(...x.t);
  if (!s) return null;
  return {
    offsetMs: s.offsetMs,
    uncertaintyMs: Math.ceil(s.uncertaintyMs + Math.max(0, at - s.at) * DRIFT_PER_MS),
  };
}
