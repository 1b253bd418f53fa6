import { fromBase64 } from './bytes.js';
import { type ClockEstimate, TRUSTED_CLOCK } from './clock.js';
import { exchangeTerm, type ReadRecord, readCustodyRecord, stampBytes } from './custody.js';
import { verifyBytes } from './keys.js';

/**
 * Why a chain was refused. `malformed`: a record that is not one; `bad-signature`: a record its signer
 * did not sign; `unknown-key`: signed or stamped with a key that is not enrolled; `bad-stamp`: exchange
 * times the stamping hop did not sign (or that cannot come from one exchange); `incomplete`: a hop of
 * the path between the agent and the posting peer signed nothing.
 */
export type ChainRefusal = 'malformed' | 'bad-signature' | 'unknown-key' | 'bad-stamp' | 'incomplete';

export type ChainResult =
  /** The source's clock minus the posting peer's, every term signed; `hops` exchanges composed. */
  | { kind: 'signed'; estimate: ClockEstimate; hops: number; residenceMs: number }
  /** No record of this source (an older agent or relay, or its first push): the bounds of 230 apply. */
  | { kind: 'absent' }
  | { kind: 'refused'; reason: ChainRefusal; detail: string };

export interface ChainInput {
  /** The raw records of the batch (`parseCustody`). */
  records: readonly string[];
  /** `site/agent` of the bundles, and the refs (`bundleRef`) of that source's bundles in the batch. */
  source: string;
  refs: readonly string[];
  /** The source agent's enrolled key. */
  agentKey: CryptoKey | null;
  /** An enrolled relay's key by its text (`ed25519:…`); null for a key no peer holds. */
  relayKey: (keyText: string) => Promise<CryptoKey | null>;
  /** The key of the peer that posted the batch: the chain ends at its stamp. */
  postedBy: string;
}

const verify = (key: CryptoKey, sig: Uint8Array, data: Uint8Array) =>
  verifyBytes(key, sig, data).catch(() => false);

/**
 * Follows one source's chain from its agent's record to the posting peer: each record's exchange must
 * be stamped by the next hop, each next hop's record signed by it, and the last stamp be the posting
 * peer's. Offsets and uncertainties add (070); nothing a hop said about another hop is used.
 * Bounded: at most one step per record.
 */
export async function verifyChain(input: ChainInput): Promise<ChainResult> {
  const read: ReadRecord[] = [];
  let malformed = 0;
  for (const raw of input.records) {
    const r = readCustodyRecord(raw);
    if (r) read.push(r);
    else malformed++;
  }
  const covers = (r: ReadRecord) => input.refs.some((ref) => r.record.bundles.includes(ref));
  const mine = read.find((r) => r.record.role === 'agent' && r.record.signer === input.source && covers(r));
  if (!mine) {
    // a record that is not one may be this source's, altered on the way
    return malformed > 0
      ? { kind: 'refused', reason: 'malformed', detail: `${malformed} record(s) unreadable` }
      : { kind: 'absent' };
  }
  if (!input.agentKey)
    return { kind: 'refused', reason: 'unknown-key', detail: `agent ${input.source} is not enrolled` };
  if (!(await verify(input.agentKey, mine.sig, mine.payload)))
    return { kind: 'refused', reason: 'bad-signature', detail: `the record of ${input.source}` };
  if (mine.record.trusted) return { kind: 'signed', estimate: TRUSTED_CLOCK, hops: 0, residenceMs: 0 };
  if (!mine.record.up) return { kind: 'absent' };

  let offsetMs = 0;
  let uncertaintyMs = 0;
  let residenceMs = 0;
  let hop = mine;
  for (let step = 0; step <= read.length; step++) {
    const up = hop.record.up;
    if (!up) return { kind: 'refused', reason: 'incomplete', detail: `${hop.record.signer} has no exchange` };
    const key = await input.relayKey(up.by);
    if (!key) return { kind: 'refused', reason: 'unknown-key', detail: `stamped by ${up.by}` };
    const [t0, t1, t2] = up.t;
    if (!(await verify(key, fromBase64(up.sig), stampBytes(t0, t1, t2))))
      return {
        kind: 'refused',
        reason: 'bad-stamp',
        detail: `${hop.record.signer}'s exchange with ${up.by}`,
      };
    const term = exchangeTerm(up, hop.record.at);
    if (!term) return { kind: 'refused', reason: 'bad-stamp', detail: `impossible times ${up.t.join(',')}` };
    offsetMs += term.offsetMs;
    uncertaintyMs += term.uncertaintyMs;
    const next = read.find((r) => r.record.role === 'relay' && r.record.signer === up.by && covers(r));
    if (next) {
      if (!(await verify(key, next.sig, next.payload)))
        return { kind: 'refused', reason: 'bad-signature', detail: `the record of ${up.by}` };
      residenceMs += next.record.residenceMs ?? 0;
    }
    if (up.by === input.postedBy)
      return { kind: 'signed', estimate: { offsetMs, uncertaintyMs }, hops: step + 1, residenceMs };
    if (!next) return { kind: 'refused', reason: 'incomplete', detail: `no record of ${up.by}` };
    hop = next;
  }
  return { kind: 'refused', reason: 'incomplete', detail: 'the chain does not reach the posting peer' };
}
