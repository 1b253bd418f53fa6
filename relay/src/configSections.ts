import { hopLimitFields } from '@driftline/hop';
import { z } from 'zod';

/** Sections of `relay.yaml` (config.ts) with settings of their own: limits, forwarding, publications. */

/** `limits:` of `relay.yaml`. */
export const LimitsSchema = z
  .strictObject({
    ...hopLimitFields,
    uploadExpiryHours: z
      .number()
      .positive()
      .default(168)
      .describe('An upload untouched this long is removed, hours.'),
    peerMaxBundles: z
      .number()
      .int()
      .positive()
      .default(100_000)
      .describe(
        'Most uplink bundles one downstream peer may have held here; past it batches get 429 with Retry-After.',
      ),
    peerMaxBytes: z
      .number()
      .int()
      .positive()
      .default(8 * 1024 ** 3)
      .describe('Most bytes one downstream peer may have held here (bundles, blobs, uploads); past it 507.'),
    retryAfterS: z
      .number()
      .int()
      .positive()
      .default(60)
      .describe('Retry-After of a 429 for a peer over peerMaxBundles, seconds.'),
    maxHoldS: z
      .number()
      .int()
      .min(0)
      .max(86_400)
      .default(21_600)
      .describe(
        "Longest an agent's downlink pull is held open while nothing waits, seconds (up to a day); stated in each answer, agents ask for it (fewer pulls on a quiet link: 4 a day each at 21600). Agents before decision 390 are told at most 3600. Keep it under the idle timeout of any proxy between agents and this relay (agents that see their holds cut twice at the same length ask less by themselves, with a warning).",
      ),
    maxResponseBytes: z
      .number()
      .int()
      .positive()
      .default(64 * 1024 * 1024)
      .describe(
        'Largest response read from an upstream after decompression, bytes (stops a compressed bomb).',
      ),
  })
  .prefault({})
  .describe('Bounds on what peers may send and hold (S8 in docs/architecture.md#invariants).');

/** `forward:` of `relay.yaml`. */
export const ForwardSchema = z
  .strictObject({
    batchBytes: z
      .number()
      .int()
      .positive()
      .default(1024 * 1024)
      .describe('Most bytes forwarded upstream in one POST, bytes.'),
    batchCount: z.number().int().positive().default(500).describe('Most bundles forwarded in one POST.'),
    backoffBaseMs: z
      .number()
      .int()
      .positive()
      .default(1000)
      .describe('First retry after a failed forward, ms; doubles (with jitter) up to backoffMaxMs.'),
    backoffMaxMs: z
      .number()
      .int()
      .positive()
      .default(300_000)
      .describe('Longest wait between retries of a failing upstream, ms.'),
    idleMs: z
      .number()
      .int()
      .positive()
      .default(5000)
      .describe('How often to look for bundles to forward when there were none, ms.'),
    requestTimeoutMs: z
      .number()
      .int()
      .positive()
      .default(120_000)
      .describe('A request to an upstream that takes longer is abandoned and retried, ms.'),
    stallS: z
      .number()
      .int()
      .min(1)
      .max(7_200)
      .default(60)
      .describe(
        "Seconds an upstream may keep an answer due at once from beginning beyond its measured round trip and the request's bytes at 128 B/s: a batch it does not begin to answer by then is cut as stalled and goes on to the next upstream, so one hung upstream holds the uplink that long, not requestTimeoutMs. A downlink answer is cut the same way past its hold, and a blob upload with nothing sent or answered for this long. No round trip measured yet: requestTimeoutMs alone for a batch (docs/decisions/535-relay-cuts-a-stalled-upstream.md).",
      ),
    pullIntervalMs: z
      .number()
      .int()
      .positive()
      .default(10_000)
      .describe(
        'How often the downlink of `sites` is pulled from an upstream that holds no downlink watch (a relay, an older hub), ms.',
      ),
    watchS: z
      .number()
      .int()
      .min(0)
      .max(86_400)
      .default(3600)
      .describe(
        "Longest the relay asks an upstream that can (a hub) to hold one watch over all its sites' downlink, seconds: the sites are pulled when the hub has something for them, not every pullIntervalMs (docs/decisions/620-one-watch-for-all-sites.md). 0: never watch, pull every pullIntervalMs. Keep it under the idle timeout of any proxy between this relay and its upstream.",
      ),
  })
  .default({
    batchBytes: 1024 * 1024,
    batchCount: 500,
    backoffBaseMs: 1000,
    backoffMaxMs: 300_000,
    idleMs: 5000,
    requestTimeoutMs: 120_000,
    stallS: 60,
    pullIntervalMs: 10_000,
    watchS: 3600,
  })
  .describe('How custody is forwarded upstream and the downlink pulled.');

/** `publications:` of `relay.yaml` (and its deprecated name `bundles:`). */
export const PublicationsSchema = z.strictObject({
  quotaBytes: z
    .number()
    .int()
    .positive()
    .default(20 * 1024 ** 3)
    .describe('Disk for publications (files from headquarters) held for sites, bytes.'),
  chunkBytes: z
    .number()
    .int()
    .positive()
    .default(1024 * 1024)
    .describe('Size of each Range request when fetching a publication from upstream, bytes.'),
  intervalMs: z
    .number()
    .int()
    .positive()
    .default(5000)
    .describe('How often pending publication fetches are retried, ms.'),
});
