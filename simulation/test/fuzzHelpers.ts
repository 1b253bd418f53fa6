import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type BundleHeader, encodeBundle, encodeUlid, generateSigningKeyPair } from '@driftline/protocol';
import { seededRandom } from '../src/core/rng.js';

/** Helpers of the fuzz test (simulation/test/fuzz.test.ts): replayable randomness, hostile bundles, checks. */

/** Deterministic pseudo-random numbers (simulation's mulberry32), so a failure can be replayed. */
export const rng = (seed: number) => seededRandom(seed);

export interface Req {
  label: string;
  base: 'hub' | 'relay';
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Uint8Array;
}

/** A signed bundle from `source` to `destination` (an agent's doc-delta, or downlink traffic such as an ack). */
export async function signedBundle(
  source: BundleHeader['source'],
  destination: BundleHeader['destination'],
  kind: 'doc-delta' | 'ack' = 'doc-delta',
) {
  const { privateKey } = await generateSigningKeyPair();
  const header = {
    id: encodeUlid(Date.now(), crypto.getRandomValues(new Uint8Array(10))),
    kind,
    source,
    destination,
    created: Date.now(),
    lifetimeS: 3600,
    priority: 'status',
  } as BundleHeader;
  return kind === 'ack'
    ? encodeBundle(
        { ...header, kind: 'ack' },
        { agent: 'a1' as never, doc: 'd', heads: [], blobs: [], committedAt: 1 },
        privateKey,
      )
    : encodeBundle(
        { ...header, kind: 'doc-delta', doc: 'other-site/x1/1' },
        { epoch: 1, changes: new Uint8Array([1, 2, 3]), blobs: [] },
        privateKey,
      );
}

/** True for a receipts answer in which every bundle was refused with a code. */
export function allRefused(text: string): boolean {
  try {
    const { receipts } = JSON.parse(text) as { receipts: { status: string; code?: string }[] };
    return receipts.length > 0 && receipts.every((r) => r.status === 'rejected' && !!r.code);
  } catch {
    return false;
  }
}

/** Every file under `dir` with its size, except SQLite's own files (the audit log grows on purpose). */
export function files(dir: string): string[] {
  const out: string[] = [];
  const stack = [dir];
  while (stack.length > 0) {
    const d = stack.pop() as string;
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) stack.push(p);
      else if (!/\.(db|sqlite)(-wal|-shm|-journal)?$/.test(e.name)) out.push(`${p}:${statSync(p).size}`);
    }
  }
  return out.sort();
}
