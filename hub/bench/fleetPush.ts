/**
 * How fleetScale pushes a round through the hop API, and how it compares two ways of pushing the same
 * round fairly: interleaved blocks of sites, so both sides see the same documents and the same machine.
 */
import { BATCH_CONTENT_TYPE, encodeBatch } from '@driftline/protocol';
import { siteOf } from './fleetCache.js';
import type { BenchHub } from './fleetHubs.js';

/** Bundles per POST, as a relay forwards a fleet's round. */
export const BATCH = 25;

/** The first site of each POST of a round of `sites` sites. */
export const batchStarts = (sites: number): number[] =>
  Array.from({ length: Math.ceil(sites / BATCH) }, (_, b) => b * BATCH);

export interface Push {
  round: number;
  sites: number;
  bundleOf(round: number, i: number): Uint8Array;
  /** Each target gets every targets.length-th POST; `lanes` POSTs are in flight at once. */
  targets: BenchHub[];
  lanes: number;
  /** Told each POST's sites when the hub answered it. */
  onAck?: (sites: string[], at: number) => void;
}

/** The POSTs starting at `starts`, BATCH bundles each, in `lanes` concurrent pushers; results and ms. */
export async function pushBatches(p: Push, starts: number[]): Promise<{ bundles: number; ms: number }> {
  const t0 = performance.now();
  let bundles = 0;
  const lane = async (l: number) => {
    const hop = (p.targets[l % p.targets.length] as BenchHub).urls.hop;
    for (let b = l; b < starts.length; b += p.lanes) {
      const i = starts[b] as number;
      const end = Math.min(p.sites, i + BATCH);
      const list: Uint8Array[] = [];
      for (let k = i; k < end; k++) list.push(p.bundleOf(p.round, k));
      const res = await fetch(`${hop}/v1/bundles`, {
        method: 'POST',
        headers: { authorization: 'Bearer relay-token', 'content-type': BATCH_CONTENT_TYPE },
        body: encodeBatch(list) as Uint8Array<ArrayBuffer>,
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`push answered ${res.status}`);
      bundles += end - i;
      p.onAck?.(
        Array.from({ length: end - i }, (_, k) => siteOf(i + k)),
        performance.now(),
      );
    }
  };
  await Promise.all(Array.from({ length: p.lanes }, (_, l) => lane(l)));
  return { bundles, ms: performance.now() - t0 };
}

/** One way of pushing a block: set up before it (not timed), push it, tear down after (not timed). */
export interface Arm {
  before?(): Promise<void>;
  push(starts: number[]): Promise<{ bundles: number; ms: number }>;
  after?(): Promise<void>;
}

/**
 * Splits the POSTs into `blocks` blocks of consecutive sites and pushes them alternately one way and the
 * other, in the order ABBA ABBA… (a drift of the machine's load or of the documents through the round
 * weighs on both sides alike). Each side's rate is its bundles × `cells` over its pushing time.
 */
export async function interleaved(
  starts: number[],
  blocks: number,
  cells: number,
  arms: [Arm, Arm],
): Promise<{ rates: [number, number]; blocks: { side: 0 | 1; resultsPerSec: number }[] }> {
  const per = Math.ceil(starts.length / blocks);
  const totals = [
    { bundles: 0, ms: 0 },
    { bundles: 0, ms: 0 },
  ];
  const done: { side: 0 | 1; resultsPerSec: number }[] = [];
  const rate = (t: { bundles: number; ms: number }) => Math.round((t.bundles * cells) / (t.ms / 1000));
  for (let k = 0; k * per < starts.length; k++) {
    const side = [0, 1, 1, 0][k % 4] as 0 | 1;
    const arm = arms[side];
    await arm.before?.();
    const got = await arm.push(starts.slice(k * per, (k + 1) * per));
    await arm.after?.();
    const t = totals[side] as { bundles: number; ms: number };
    t.bundles += got.bundles;
    t.ms += got.ms;
    done.push({ side, resultsPerSec: rate(got) });
  }
  const [a, b] = totals as [{ bundles: number; ms: number }, { bundles: number; ms: number }];
  return { rates: [rate(a), rate(b)], blocks: done };
}

/** Blocks for `batches` POSTs: up to 8, an even number (both sides as many), at least 2. */
export const blockCount = (batches: number): number => Math.max(2, Math.min(8, batches - (batches % 2)));
