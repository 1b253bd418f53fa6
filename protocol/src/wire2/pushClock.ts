import { type ClockEstimate, MAX_CLOCK_MS, TRUSTED_CLOCK } from '../clock.js';
import type { Value } from './cbor.js';

/**
 * A push's clock term, field 10 (docs/decisions/495-hop-v2-on-the-agent-link.md, "Clock terms for a v2
 * push"): the agent's clock minus its upstream's, as v1's `driftline-clock` states it, inside the bytes the
 * agent signs. Either `true` (a disciplined clock: `trusted`, {@link TRUSTED_CLOCK}) or
 * `[zigzag(offsetMs), uncertaintyMs]`: the subset has no negative integers (one encoding per value), so the
 * offset goes zigzag (0 → 0, −1 → 1, 1 → 2, …), as the heartbeat's gaps. Both within a year
 * ({@link MAX_CLOCK_MS}), as the header's. Sent only where every node on the way states `clock` in
 * `pushForms` (`PUSH_FORM_CLOCK`): an older node refuses a field it does not know.
 */

const zigzag = (n: number): number => (n >= 0 ? 2 * n : -2 * n - 1);
const unzigzag = (z: number): number => (z % 2 === 0 ? z / 2 : -(z + 1) / 2);

/**
 * The estimate as a push carries it: offset rounded, uncertainty rounded up (as `formatClock`); undefined
 * when there is none or it states more than a year either way (garbage, left out rather than refused).
 */
export function pushClockOf(e: ClockEstimate | null | undefined): ClockEstimate | undefined {
  if (!e) return undefined;
  if (e.trusted) return TRUSTED_CLOCK;
  const offsetMs = Math.round(e.offsetMs);
  const uncertaintyMs = Math.ceil(e.uncertaintyMs);
  if (!Number.isFinite(offsetMs) || !Number.isFinite(uncertaintyMs)) return undefined;
  if (Math.abs(offsetMs) > MAX_CLOCK_MS || uncertaintyMs < 0 || uncertaintyMs > MAX_CLOCK_MS)
    return undefined;
  return { offsetMs, uncertaintyMs };
}

/** Field 10's value for an estimate {@link pushClockOf} gave. */
export function clockToValue(e: ClockEstimate): Value {
  return e.trusted ? true : [zigzag(e.offsetMs), e.uncertaintyMs];
}

/** Reads field 10: the estimate, or what is wrong with it (the push is refused, naming the field). */
export function clockFromValue(v: Value): { ok: true; value: ClockEstimate } | { ok: false; reason: string } {
  if (v === true) return { ok: true, value: TRUSTED_CLOCK };
  if (!Array.isArray(v) || v.length !== 2)
    return { ok: false, reason: 'is neither true (trusted) nor [zigzag offset, uncertainty]' };
  const [z, u] = v as readonly Value[];
  if (typeof z !== 'number' || typeof u !== 'number')
    return { ok: false, reason: 'is not two uints [zigzag offset, uncertainty]' };
  if (z > 2 * MAX_CLOCK_MS)
    return { ok: false, reason: `states an offset over ${MAX_CLOCK_MS} ms either way` };
  if (u > MAX_CLOCK_MS)
    return { ok: false, reason: `states an uncertainty of ${u} ms, over ${MAX_CLOCK_MS}` };
  return { ok: true, value: { offsetMs: unzigzag(z), uncertaintyMs: u } };
}
