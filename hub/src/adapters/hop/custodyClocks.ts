import type { Custody, SourceClocks } from '@driftline/hop';
import {
  bundleRef,
  type ChainRefusal,
  type ClockEstimate,
  composeClocks,
  decodeBundle,
  endpointText,
  publicKeyFromText,
  readCustodyRecord,
  verifyChain,
} from '@driftline/protocol';
import { Counter, type Registry } from 'prom-client';
import type { PeerRow } from '../../ports/HubStore.js';
import type { AgentRow } from '../../ports/hubRows.js';

/** What the hub made of one source's chain in a batch (counted and, but for `signed`, logged). */
export type ChainOutcome = 'signed' | ChainRefusal | 'contradicts-signed' | 'unsigned';

export interface ChainEvent {
  outcome: ChainOutcome;
  source: string;
  peer: string;
  detail?: string;
  /** The plain path estimate (`driftline-source-clocks`) and the signed one, when both were there. */
  plain?: ClockEstimate | null;
  signed?: ClockEstimate;
}

export interface CustodyClocksDeps {
  listPeers(): Promise<PeerRow[]>;
  getAgent(site: string, agent: string): Promise<AgentRow | null>;
  now(): number;
  onChain(e: ChainEvent): void;
}

/** `hub_clock_custody_total{outcome}`: each source's chain in each batch, by what the hub made of it. */
export function custodyChainCounter(registry: Registry): Counter<'outcome'> {
  return new Counter({
    name: 'hub_clock_custody_total',
    help: 'Signed timing chains of a source in a batch, by outcome (signed, contradicts-signed, malformed, bad-signature, unknown-key, bad-stamp, incomplete): docs/decisions/290',
    labelNames: ['outcome'],
    registers: [registry],
  });
}

/** The log line of a chain event other than `signed` (the message says what happened and what to do). */
export function chainMessage(e: ChainEvent): string {
  if (e.outcome === 'contradicts-signed')
    return `a hop below peer '${e.peer}' restated the clock of ${e.source} (the plain estimate disagrees with the signed chain); the signed estimate is used: look for what sits between ${e.source} and '${e.peer}'`;
  return `refused the signed clock chain of ${e.source} via peer '${e.peer}' (${e.outcome}: ${e.detail ?? ''}); this batch sets no clock estimate for it: check the relays on its path are enrolled with their keys (hub peer list) and what sits between them`;
}

/** Whether a readable record of `source` covering one of `refs` is among `records` (signature not checked). */
function recordOf(records: readonly string[], source: string, refs: readonly string[]): boolean {
  return records.some((raw) => {
    const r = readCustodyRecord(raw)?.record;
    return r?.role === 'agent' && r.signer === source && refs.some((ref) => r.bundles.includes(ref));
  });
}

/** How long the enrolled relay keys are read from the store at most once. */
const KEYS_TTL_MS = 10_000;

const meets = (a: ClockEstimate, b: ClockEstimate) =>
  Math.abs(a.offsetMs - b.offsetMs) <= a.uncertaintyMs + b.uncertaintyMs;

/**
 * The clocks of a batch's sources as the signed timing chain gives them
 * (docs/decisions/290-signed-hop-chain.md), over the plain path estimates (`clocks`, decision 070):
 *
 * - a source whose chain verifies gets the signed estimate (composed with the posting peer's own clock,
 *   which it reports on its own authenticated connection); a plain estimate that disagrees with it
 *   beyond both uncertainties is a lie of some hop below, counted (`contradicts-signed`);
 * - a source whose chain is refused (a record altered, times restamped, a key not enrolled, a hop of
 *   the path missing) gets no estimate from this batch: the plain one came the same way. Counted and
 *   logged; the agent's standing offset and the bounds of decision 230 apply;
 * - a source without a record (an older agent, or a path through an older relay) keeps the plain one,
 *   unless its chain verified before (since this hub started): then a hop below stripped it, and the
 *   batch sets no estimate for it (`unsigned`, counted and logged). A relay restarted since it took the
 *   bundles forwards them without records too, which shows the same way.
 *
 * Only when the posting peer has an enrolled key: for an older relay nothing changes.
 */
export class CustodyClocks {
  private relayKeys: { at: number; byText: Map<string, Promise<CryptoKey | null>> } | null = null;
  private readonly agentKeys = new Map<string, Promise<CryptoKey | null>>();
  /** Sources whose chain verified since this hub started: from them, a batch without one is refused. */
  private readonly signers = new Set<string>();

  constructor(private readonly d: CustodyClocksDeps) {}

  private async relayKey(text: string): Promise<CryptoKey | null> {
    const now = this.d.now();
    if (!this.relayKeys || now - this.relayKeys.at > KEYS_TTL_MS) {
      const byText = new Map<string, Promise<CryptoKey | null>>();
      for (const p of await this.d.listPeers())
        if (p.publicKey && (p.revokedAt == null || p.revokedAt > now))
          byText.set(
            p.publicKey,
            publicKeyFromText(p.publicKey).catch(() => null),
          );
      this.relayKeys = { at: now, byText };
    }
    return (await this.relayKeys.byText.get(text)) ?? null;
  }

  private async agentKey(site: string, agent: string): Promise<CryptoKey | null> {
    const row = await this.d.getAgent(site, agent);
    if (!row?.publicKey) return null;
    let k = this.agentKeys.get(row.publicKey);
    if (!k) {
      k = publicKeyFromText(row.publicKey).catch(() => null);
      if (this.agentKeys.size > 10_000) this.agentKeys.clear();
      this.agentKeys.set(row.publicKey, k);
    }
    return k;
  }

  /** `clocks` with each source's signed estimate where its chain verifies (see the class). */
  async of(
    peer: { name: string; publicKey: string | null },
    bundles: readonly Uint8Array[],
    clocks: SourceClocks | undefined,
    custody: Custody | undefined,
  ): Promise<SourceClocks | undefined> {
    if (!custody || !peer.publicKey) return clocks;
    if (custody.records.length === 0 && this.signers.size === 0) return clocks;
    const refs = new Map<string, { site: string; agent: string; refs: string[] }>();
    for (const b of bundles) {
      const d = decodeBundle(b);
      if (!d.ok) continue;
      const src = d.value.header.source;
      if (src === 'hub' || !src.agent) continue;
      const source = endpointText(src);
      const e = refs.get(source) ?? { site: src.site, agent: src.agent, refs: [] };
      e.refs.push(await bundleRef(b));
      refs.set(source, e);
    }
    const decided = new Map<string, ClockEstimate | null>();
    for (const [source, s] of refs) {
      const r = await verifyChain({
        records: custody.records,
        source,
        refs: s.refs,
        agentKey: await this.agentKey(s.site, s.agent),
        relayKey: (k) => this.relayKey(k),
        postedBy: peer.publicKey,
      });
      if (r.kind === 'absent') {
        // a source that signed before, now without a record: a hop below stripped it (or the agent or a
        // relay on its path restarted and has no stamped exchange yet). Its plain estimate came the same way.
        if (this.signers.has(source) && !recordOf(custody.records, source, s.refs)) {
          decided.set(source, null);
          this.d.onChain({
            outcome: 'unsigned',
            source,
            peer: peer.name,
            detail: 'no record of a source that signs',
          });
        }
        continue;
      }
      if (r.kind === 'refused') {
        decided.set(source, null);
        this.d.onChain({ outcome: r.reason, source, peer: peer.name, detail: r.detail });
        continue;
      }
      const signed = r.estimate.trusted
        ? r.estimate
        : custody.peerClock
          ? composeClocks(r.estimate, custody.peerClock)
          : null;
      if (!signed) continue; // the posting peer gave no clock of its own yet: the plain path (none either)
      decided.set(source, signed);
      if (this.signers.size > 100_000) this.signers.clear();
      this.signers.add(source);
      const plain = clocks?.(source) ?? null;
      const lie = plain !== null && !signed.trusted && !plain.trusted && !meets(plain, signed);
      this.d.onChain({
        outcome: lie ? 'contradicts-signed' : 'signed',
        source,
        peer: peer.name,
        plain,
        signed,
      });
    }
    return (source) => (decided.has(source) ? (decided.get(source) ?? null) : (clocks?.(source) ?? null));
  }
}
