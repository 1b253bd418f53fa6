import {
  BATCH_CONTENT_TYPE,
  type ClockEstimate,
  CUSTODY_HEADER,
  DOWNLINK_WATCH_PATH,
  type DownlinkWatchAnswer,
  DownlinkWatchAnswerSchema,
  formatSourceClocks,
  HELD_HEADER,
  HOLDER_HEADER,
  LEGACY_DOWNLINK_WAIT_S,
  LEGACY_MAX_STATED_S,
  LONG_HOLDS_HEADER,
  MAX_DOWNLINK_WAIT_S,
  PEER_PATH,
  type PeerInfo,
  PeerInfoSchema,
  parseHeld,
  parseHeldMax,
  REFUSALS_HEADER,
  type Receipt,
  ReceiptsResponseSchema,
  type RelayRefusal,
  type RelayStatus,
  readCapped,
  readCappedText,
  SOURCE_CLOCKS_HEADER,
  STATUS_PATH,
  type StampedExchange,
  type wire2,
} from '@driftline/protocol';
import { compressBatch } from '../wire/compress.js';
import { watchAnswer, watchPromptAnswer } from './answerWatch.js';
import { readDownlinkAnswer } from './downlinkAnswer.js';
import { fetchRange, type RangeSink } from './fetchRange.js';
import type { HopClientOptions } from './hopClientOptions.js';
import { ERROR_BODY_CAP, HopRequests } from './hopRequests.js';
import { readRefusals } from './refusals.js';
import { failure, type HopResult, safeJson } from './result.js';
import { type TusUpload, tusUpload } from './tusUpload.js';
import { Wire2Carrier, type Wire2CarrierState } from './wire2Carrier.js';
import { exchangeWire2, registerWire2 } from './wire2Client.js';

/**
 * Least time between two clock samples taken by held downlink pulls, ms: an hour adds ~54 ms of drift
 * (15 ppm) to the estimate's uncertainty, and every post is timed as well.
 */
export const HELD_SAMPLE_EVERY_MS = 3_600_000;

export type { HopClientOptions } from './hopClientOptions.js';

/** Largest watch answer read: 10,000 site names twice over (sites and refused), bytes. */
const MAX_WATCH_ANSWER_BYTES = 4 * 1024 * 1024;

/**
 * The hop API, client side, for the agent and for relays: batches (brotli, one receipt per bundle),
 * the downlink, tus uploads and `Range` fetches of blobs. Every answer is read with a cap, every
 * exchange is timed (the caller's clock minus the upstream's goes up with each request), and every
 * outcome is a {@link HopResult}: callers read `retryable`, never parse messages.
 */
export class HopClient {
  readonly url: string;
  private readonly timeoutMs: number;
  private readonly maxResponseBytes: number;
  private readonly now: () => number;
  /** Every request's heads, deadlines and timing (`hopRequests.ts`). */
  private readonly r: HopRequests;
  /** Hop v2's exchanges: h2c where the upstream states it, else on HTTP/1.1 (the requests' transport). */
  private readonly carrier: Wire2Carrier;
  /**
   * The longest hold the upstream stated (`driftline-held: <s>;max=<longest>`), or null before it did
   * (an older upstream): pulls then ask at most {@link LEGACY_DOWNLINK_WAIT_S}, unconditionally.
   */
  private heldMaxS: number | null = null;
  /**
   * Whether the upstream grants holds over an hour: unknown (null) until a pull that said this client
   * reads them ({@link LONG_HOLDS_HEADER}) is answered (decision 390).
   */
  private longHolds: boolean | null = null;

  constructor(private readonly opts: HopClientOptions) {
    this.url = opts.url.replace(/\/+$/, '');
    this.timeoutMs = opts.timeoutMs ?? 30 * 60_000;
    this.maxResponseBytes = opts.maxResponseBytes ?? 64 * 1024 * 1024;
    this.now = opts.now ?? Date.now;
    this.r = new HopRequests(this.url, this.timeoutMs, this.now, opts);
    this.carrier = new Wire2Carrier(
      this.url,
      this.r.transport,
      !opts.transport && (opts.h2c ?? true),
      opts.onWire2Carrier,
      this.now,
    );
  }

  /** The caller's clock minus the upstream's; null before the first timed exchange. */
  clock(): ClockEstimate | null {
    return this.r.clock();
  }

  /**
   * Of the last 8 exchanges the upstream stamped, the one with the least round trip (as the clock
   * filter picks) since which this client's wall clock was neither stepped nor skewed: the term this
   * client signs in its custody record. Null when the upstream stamps none, or none is left
   * ({@link stamps} tells which; docs/decisions/550-clock-moved-since-its-sample.md).
   */
  stampedExchange(): StampedExchange | null {
    return this.r.times.stampedExchange(this.now(), performance.now());
  }

  /** Whether the upstream stamped any of the last exchanges (a keyed node, decision 290). */
  stamps(): boolean {
    return this.r.times.stamps();
  }

  /** Ends every request in progress and refuses new ones (shutdown): they fail `aborted`. */
  abort(): void {
    this.r.stopping.abort();
    // after the aborts above have ended their requests (as aborted, not as a closed socket)
    setImmediate(() => {
      this.r.transport.close();
      this.carrier.close();
    });
  }

  /** The least send-to-headers time of the last requests answered, ms; null before one was. */
  roundTripMs(): number | null {
    return this.r.times.roundTripMs();
  }

  /** `GET /v1/health`: a cheap reachability check (a down link costs this and nothing else). */
  async probe(): Promise<HopResult<void>> {
    const r = await this.r.request('/v1/health', { method: 'GET' });
    if (!r.ok) return r;
    await readCapped(r.value, ERROR_BODY_CAP);
    return { ok: true, value: undefined };
  }

  /**
   * `POST /v1/bundles` with an encoded batch (protocol's `encodeBatch`), brotli-compressed. `sources`:
   * each bundle source's clock minus the caller's, for the upstream to compose with its own. `count`,
   * when given, is how many receipts the answer must hold. `custody`: the batch's signed timing records
   * (`formatCustody`, decision 290). `bytes` is what went on the wire.
   */
  async postBatch(
    batch: Uint8Array,
    opts: { sources?: ReadonlyMap<string, ClockEstimate>; count?: number; custody?: string } = {},
  ): Promise<HopResult<{ receipts: Receipt[]; bytes: number }>> {
    const body = compressBatch(batch);
    const sources = opts.sources && opts.sources.size > 0 ? formatSourceClocks(opts.sources) : '';
    const r = await this.r.request('/v1/bundles', {
      method: 'POST',
      headers: {
        'content-type': BATCH_CONTENT_TYPE,
        'content-encoding': 'br',
        ...(sources ? { [SOURCE_CLOCKS_HEADER]: sources } : {}),
        ...(opts.custody ? { [CUSTODY_HEADER]: opts.custody } : {}),
      },
      body,
    });
    if (!r.ok) return r;
    const read = await readCappedText(r.value, this.maxResponseBytes);
    let json: unknown = null;
    try {
      json = read.ok ? JSON.parse(read.text) : null;
    } catch {}
    const parsed = ReceiptsResponseSchema.safeParse(json);
    if (!parsed.success || (opts.count !== undefined && parsed.data.receipts.length !== opts.count))
      return failure(
        'bad-answer',
        'upstream answered something that is not a receipt list, one per bundle',
        true,
      );
    return { ok: true, value: { receipts: parsed.data.receipts, bytes: body.length } };
  }

  /**
   * `GET /v1/bundles?for=<site>&after=<cursor>[&wait=<s>]`: one page of a site's downlink and the cursor
   * after it. With `hold`, an upstream that can holds the pull open until downlink arrives (or `waitS`
   * passes) and says it can with `held` ({@link HELD_HEADER}); `waitS` 0 only asks. An older one answers
   * at once, `held` false.
   */
  async pullDownlink(
    site: string,
    after: string | undefined,
    limit?: number,
    hold?: { waitS: number; signal?: AbortSignal; holder?: string },
  ): Promise<
    HopResult<{
      bundles: Uint8Array[];
      cursor: string;
      bytes: number;
      held: boolean;
      /** Seconds the upstream held (or would hold) this pull, as it said (`driftline-held`); absent: not held. */
      heldS?: number;
      /** Held pulls the upstream keeps at once for this client and site (`keep`, decision 340); 1 when it says nothing. */
      keep: number;
      /** The longest hold the upstream stated (decision 320); absent: it stated none. */
      holdMaxS?: number;
      refusals: RelayRefusal[];
    }>
  > {
    const q = new URLSearchParams({ for: site });
    if (limit !== undefined) q.set('limit', String(limit));
    if (after) q.set('after', after);
    // Ask for the longest hold the upstream stated (an older one: the old bound). The pull's own timeout
    // is its hold and a minute for the round trip, when that is longer than the client's request timeout
    // (decision 380: an hour's hold is one pull, not two).
    const longest = Math.min(this.heldMaxS ?? LEGACY_DOWNLINK_WAIT_S, MAX_DOWNLINK_WAIT_S);
    const waitS = hold ? Math.max(0, Math.min(Math.round(hold.waitS), longest)) : 0;
    if (hold) q.set('wait', String(waitS));
    // An upstream that states its longest hold answers "nothing since your cursor" with a bare 304.
    const conditional = hold !== undefined && after !== undefined && this.heldMaxS !== null;
    // A conditional held pull is timed only when the last sample is an hour old: the server's times
    // (and its signed stamp, decision 290) cost ~250 B of answer, and posts are timed anyway.
    const time = !conditional || this.r.times.sampleOlderThan(this.now(), HELD_SAMPLE_EVERY_MS);
    // Until it is known whether the upstream holds longer than an hour, a held pull says this client reads
    // a longer longest (an older client takes one for garbage, decision 390); one asking more says it anyway.
    const marked = hold !== undefined && this.longHolds === null && waitS <= LEGACY_MAX_STATED_S;
    const watch = watchAnswer(this, waitS, this.opts.stallMs, hold?.signal);
    const r = await this.r.request(
      `/v1/bundles?${q}`,
      {
        method: 'GET',
        headers: {
          'accept-encoding': 'br',
          ...(conditional ? { 'if-none-match': `"${after}"` } : {}),
          // who holds it, so the upstream keeps two of this agent's held pulls (decision 340)
          ...(hold?.holder ? { [HOLDER_HEADER]: hold.holder } : {}),
          ...(marked ? { [LONG_HOLDS_HEADER]: '1' } : {}),
        },
      },
      watch.signal,
      false,
      time,
      Math.max(this.timeoutMs, (waitS + 60) * 1000),
      false,
    );
    watch.begun();
    if (!r.ok) return watch.cut() ?? r;
    const heldHeader = r.value.headers.get(HELD_HEADER);
    const held = hold !== undefined && heldHeader !== null;
    if (hold !== undefined) {
      const max = parseHeldMax(heldHeader);
      // An unmarked pull of an hour or less is told at most an hour: that does not undo a longer longest
      // (a pull asking more than an hour is told the real one, and the longest follows it).
      const capped =
        !marked && waitS <= LEGACY_MAX_STATED_S && max === LEGACY_MAX_STATED_S && (this.heldMaxS ?? 0) > max;
      if (!capped) this.heldMaxS = max;
      if (marked && heldHeader !== null) this.longHolds = (max ?? 0) > LEGACY_MAX_STATED_S;
    }
    const stated = held ? parseHeld(heldHeader) : null;
    const how = {
      ...(stated ? { heldS: stated.heldS } : {}),
      keep: stated?.keep ?? 1,
      ...(held && this.heldMaxS !== null ? { holdMaxS: this.heldMaxS } : {}),
    };
    if (r.value.status === 304) {
      if (after === undefined)
        return failure('bad-answer', 'upstream answered 304 to a pull with no cursor', true);
      return { ok: true, value: { bundles: [], cursor: after, bytes: 0, held, ...how, refusals: [] } };
    }
    const refusals = readRefusals(r.value.headers.get(REFUSALS_HEADER));
    const body = await readDownlinkAnswer(r.value, this.url, this.maxResponseBytes, this.progress());
    if (!body.ok) return body;
    return { ok: true, value: { ...body.value, held, ...how, refusals } };
  }

  /** How a downlink answer's body must progress, when this client cuts stalls. */
  private progress() {
    const stallMs = this.opts.stallMs;
    if (stallMs === undefined) return undefined;
    // Elapsed on the monotonic clock, as the answer's deadline: a wall clock moved forward mid-read is no stall.
    return { stallMs, floorBytesPerS: this.opts.floorBytesPerS ?? 128, now: () => performance.now() };
  }

  /**
   * `POST /v1/downlink/watch` (decision 620): the sites of `cursors` with downlink after the cursor named,
   * held up to `waitS` while none has any. Its answer is watched as a held pull's is (with `stallMs`).
   * 404: the upstream holds no watch (a relay, an older hub).
   */
  async watchDownlink(
    cursors: ReadonlyMap<string, string>,
    waitS: number,
    signal?: AbortSignal,
  ): Promise<HopResult<DownlinkWatchAnswer>> {
    const watch = watchAnswer(this, waitS, this.opts.stallMs, signal);
    const r = await this.r.request(
      DOWNLINK_WATCH_PATH,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ wait: waitS, sites: Object.fromEntries(cursors) }),
      },
      watch.signal,
      false,
      false,
      Math.max(this.timeoutMs, (waitS + 60) * 1000),
      false,
    );
    watch.begun();
    if (!r.ok) return watch.cut() ?? r;
    const read = await readCappedText(r.value, MAX_WATCH_ANSWER_BYTES);
    const parsed = DownlinkWatchAnswerSchema.safeParse(read.ok ? safeJson(read.text) : null);
    if (!parsed.success)
      return failure(
        'bad-answer',
        `upstream answered ${DOWNLINK_WATCH_PATH} with something that is not a watch answer`,
        true,
      );
    return { ok: true, value: parsed.data };
  }

  /** `GET /v1/peer`: who this client's token is upstream and the sites it acts for there. */
  async peerInfo(): Promise<HopResult<PeerInfo>> {
    const r = await this.r.request(PEER_PATH, { method: 'GET', headers: { accept: 'application/json' } });
    if (!r.ok) return r;
    const read = await readCappedText(r.value, ERROR_BODY_CAP * 16);
    const parsed = PeerInfoSchema.safeParse(read.ok ? safeJson(read.text) : null);
    if (!parsed.success)
      return failure('bad-answer', `upstream answered ${PEER_PATH} with something that is not a peer`, true);
    return { ok: true, value: parsed.data };
  }

  /**
   * Hop v2: one signed message to `POST /v2`, no token (`wire2Client.ts`); a hold adds to its timeout. A
   * `pull`'s answer is watched as v1's downlink answers are (with `stallMs`): cut when it does not begin
   * within the hold, the round trip and `stallMs`, or when its body stalls or drips (`stalled`,
   * docs/decisions/410-independent-downlinks.md).
   */
  async exchangeWire2(message: Uint8Array, signal?: AbortSignal, holdS = 0, pull = false) {
    const { url, carrier: transport, now, maxResponseBytes: maxBytes } = this;
    const { times } = this.r;
    const ms = Math.max(this.timeoutMs, (holdS + 60) * 1000);
    const watch = pull
      ? watchAnswer(this, holdS, this.opts.stallMs, signal)
      : watchPromptAnswer(this, message.length, this.r.promptWatch(), signal);
    const progress = pull ? this.progress() : undefined;
    const t = {
      url,
      transport,
      times,
      now,
      maxBytes,
      signal: (s?: AbortSignal) => this.r.signal(s, ms),
      ...(watch ? { begun: () => watch.begun() } : {}),
      ...(progress ? { progress } : {}),
    };
    const r = await exchangeWire2(t, message, watch?.signal ?? signal);
    watch?.begun();
    if (r.ok) return r;
    // cut for making no progress (or its answer stalled): not on that connection again (h2c)
    const cut = watch?.cut() ?? (r.code === 'stalled' ? r : null);
    if (cut) this.carrier.retire();
    return cut ?? r;
  }

  /** `POST /v1/peer/wire2` (bearer token): registers the agent's key; 404: the upstream speaks v1 only. */
  async registerWire2(reg: wire2.Wire2Registration): Promise<HopResult<wire2.Wire2Info>> {
    return registerWire2((path, init) => this.r.request(path, init), this.carrier, reg);
  }

  /** What carries this client's hop v2 exchanges now (h2c, or HTTP/1.1 and why). */
  wire2Carrier(): Wire2CarrierState {
    return this.carrier.state();
  }

  /**
   * `POST /v1/status`: this relay's own health, for the upstream to keep and show. Answers who this relay
   * is there, as `GET /v1/peer` would, when the upstream says so in the same answer (a hub since decision
   * 610); null when it answers nothing (an older hub: 204) or something that is not a peer.
   */
  async postStatus(status: RelayStatus): Promise<HopResult<PeerInfo | null>> {
    const r = await this.r.request(STATUS_PATH, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(status),
    });
    if (!r.ok) return r;
    if (r.value.status === 204) {
      await readCapped(r.value, ERROR_BODY_CAP);
      return { ok: true, value: null };
    }
    const read = await readCappedText(r.value, ERROR_BODY_CAP * 16);
    const parsed = PeerInfoSchema.safeParse(read.ok ? safeJson(read.text) : null);
    return { ok: true, value: parsed.success ? parsed.data : null };
  }

  /** Resumable upload of one blob to `/v1/uploads/` (tus); see {@link TusUpload}. */
  upload(blob: TusUpload): Promise<HopResult<void>> {
    return tusUpload(this.url, this.r.token(), blob, this.r.stopping.signal, this.opts.transport);
  }

  /**
   * `GET /v1/blobs/<sha256>` for bytes `start`..`end` (inclusive) into `sink`, each chunk written before
   * the next is read; see {@link fetchRange}.
   */
  fetchRange(sha256: string, start: number, end: number, sink: RangeSink, signal?: AbortSignal) {
    return fetchRange(
      `${this.url}/v1/blobs/${sha256}`,
      this.r.token(),
      sha256,
      start,
      end,
      sink,
      this.r.signal(signal),
      this.opts.transport,
    );
  }
}
