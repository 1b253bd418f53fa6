import { MAX_CUSTODY_RECORDS } from '@driftline/protocol';

/**
 * The signed custody records each bundle came with, by its ref (`bundleRef`), and when this relay took
 * it (docs/decisions/290-signed-hop-chain.md). Kept in memory and bounded (the oldest go first): a
 * relay that restarts forwards what it holds without them, and the hub bounds those bundles' clocks as
 * it does an older relay's (decision 230). Records are passed on as they came: a relay cannot read
 * what it cannot check, and the hub checks every one.
 */
export class CustodyChains {
  private readonly byRef = new Map<string, { records: readonly string[]; tookAt: number }>();

  constructor(private readonly max = 50_000) {}

  /** Notes the records a batch came with, for each of its bundles. */
  took(refs: readonly string[], records: readonly string[], at: number): void {
    if (records.length === 0) return;
    const kept = records.slice(0, MAX_CUSTODY_RECORDS);
    for (const ref of refs) {
      this.byRef.delete(ref);
      this.byRef.set(ref, { records: kept, tookAt: at });
      if (this.byRef.size > this.max) this.byRef.delete(this.byRef.keys().next().value as string);
    }
  }

  /** The records of these bundles (each once, in the order first seen) and the earliest time one was taken. */
  of(refs: readonly string[]): { records: string[]; tookAt: number | null } {
    const records = new Set<string>();
    let tookAt: number | null = null;
    for (const ref of refs) {
      const c = this.byRef.get(ref);
      if (!c) continue;
      for (const r of c.records) records.add(r);
      tookAt = tookAt === null ? c.tookAt : Math.min(tookAt, c.tookAt);
    }
    return { records: [...records], tookAt };
  }

  /** Forgets bundles that left custody. */
  forget(refs: readonly string[]): void {
    for (const ref of refs) this.byRef.delete(ref);
  }
}
