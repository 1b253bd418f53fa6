import { type BundleHeader, encodeBatch, encodeBundle } from '@driftline/protocol';
import type { PendingDelta } from '../../ports/Ledger.js';
import type { Uplink } from '../../ports/Uplink.js';
import { laterCursor } from './downlinkAnswers.js';
import { DownlinkHandler } from './downlinkHandler.js';
import type { PullOutcome, PushOutcome, Refusal, SyncDeps } from './syncContract.js';
import { uploadBlobsOnce } from './uploadBlobs.js';

export type {
  ApprovalPayload,
  PullOutcome,
  PushOutcome,
  Refusal,
  SyncDeps,
  Wire2Acks,
} from './syncContract.js';

/** One push or pull cycle over the agent's upstreams (steps 5 and 8 of docs/architecture.md#the-trip). Timers live in the caller. */
export class SyncEngine {
  /** Upstreams whose last request failed: they get a cheap probe before a batch is sent again. */
  private readonly suspect = new Set<string>();
  /** Upstreams with a pull answered at once (after a failure) in flight: a pull beside it is held. */
  private readonly prompting = new Set<string>();
  /** Set by {@link abortExchanges}: the agent is stopping. */
  private stopping = false;
  /** What comes down: verified, handled one at a time across upstreams (downlinkHandler.ts). */
  private readonly downlink: DownlinkHandler;
  /** When an upstream last took a push (agent clock); null: not since start. */
  private lastPushedAt: number | null = null;

  constructor(private readonly deps: SyncDeps) {
    this.downlink = new DownlinkHandler(deps);
  }

  /**
   * Signs what the hub has not acknowledged and pushes it to the first upstream that answers. After a
   * hub rejection, nothing goes up until its retry time (the hub would refuse it again): then everything
   * since the hub's ack goes up once more. `onReachable` hears the first probe of a suspect upstream that
   * answers, before the batch goes.
   */
  async pushOnce(onReachable?: () => void): Promise<PushOutcome> {
    const [rejection] = this.deps.store.rejections();
    const wait = rejection ? rejection.retryAt - this.deps.now() : 0;
    if (rejection && wait > 0) return { kind: 'held', code: rejection.code, retryInMs: wait };
    const errors: string[] = [];
    const refusals: Refusal[] = [];
    let uplinks = this.deps.uplinks;
    if (!this.deps.store.documentOpen() || uplinks.every((u) => this.suspect.has(u.url))) {
      // Idle since it started (nothing recorded): building the batch would open the document and compile
      // Automerge (~27 MB) only to find the link down, so an upstream that answers a probe comes first.
      // So too while every upstream failed last time: building the batch writes the results held out of
      // the document (docs/decisions/370-one-change-per-push.md), and a link that stays down would cut
      // a round into one change per attempt; probed first, it is one change when the link returns.
      const at = await this.firstAnswering(errors, refusals, onReachable);
      if (at < 0) return { kind: 'unreachable', errors, refusals };
      uplinks = uplinks.slice(at);
    }
    let pending = this.deps.store.pending();
    if (pending.length === 0) {
      if (!this.deps.presenceDue?.(this.lastPushedAt, this.deps.now())) return { kind: 'idle' };
      pending = this.deps.store.presence();
    }
    // Failures first: a relay forwards by priority, and so does the batch order.
    pending.sort((a, b) => Number(b.hasFailure) - Number(a.hasFailure) || a.epoch - b.epoch);
    const bundles = await Promise.all(pending.map((p) => this.sign(p)));
    const batch = encodeBatch(bundles.map((b) => b.bytes));
    uplinks = this.sittersLast(uplinks, pending);
    for (const up of uplinks) {
      // A link that worked last time gets the batch straight away (one round trip, which is what a
      // minutes-long delay makes precious); one that failed gets a small probe first.
      if (this.suspect.has(up.url) && !(await this.answers(up, errors, refusals, onReachable))) continue;
      const r = await up.postBundles(batch);
      if (!r.ok) {
        this.failed(up, r, errors, refusals);
        continue;
      }
      this.suspect.delete(up.url);
      this.lastPushedAt = this.deps.now();
      for (const [i, b] of bundles.entries()) {
        const receipt = r.value.find((x) => x.index === i);
        if (receipt?.status === 'rejected') {
          this.deps.log.warn(
            { upstream: up.url, bundleId: b.id, code: receipt.code, message: receipt.message },
            'upstream rejected a bundle',
          );
        }
        // Pushed straight to the hub and merged: the hub takes this agent's bundles now.
        if (receipt?.by === 'hub' && receipt.status !== 'rejected' && this.deps.store.clearRejections() > 0)
          this.deps.log.info({ upstream: up.url }, 'the hub takes this agent’s bundles again');
        this.deps.store.recordPush({
          sentAt: b.sentAt,
          bundleId: b.id,
          epoch: b.delta.epoch,
          heads: b.delta.heads,
          bytes: b.bytes.length,
          upstream: up.url,
          receipt: receipt?.status ?? null,
          blobs: b.delta.blobs.map((x) => x.sha256),
          fromAck: b.delta.fromAck === true,
        });
      }
      return { kind: 'pushed', upstream: up.url, receipts: r.value, bytes: batch.length };
    }
    return { kind: 'unreachable', errors, refusals };
  }

  /**
   * `uplinks` with the upstreams that sat on custody past their deadline last (tried only when no other
   * answers), and a receipt held past its deadline, sent again now, logged once per push
   * (docs/decisions/575-custody-deadline-per-path.md).
   */
  private sittersLast(uplinks: readonly Uplink[], pending: readonly PendingDelta[]): readonly Uplink[] {
    const overdue = pending.flatMap((p) => (p.overdue ? [p.overdue] : []));
    const sat = new Set([...this.deps.store.sitters().map((s) => s.upstream), ...overdue.map((o) => o.by)]);
    if (sat.size === 0) return uplinks;
    const ordered = [...uplinks.filter((u) => !sat.has(u.url)), ...uplinks.filter((u) => sat.has(u.url))];
    for (const o of overdue)
      this.deps.log.warn(
        {
          upstream: o.by,
          heldS: Math.round((this.deps.now() - o.at) / 1000),
          deadlineS: Math.round(o.deadlineMs / 1000),
          via: ordered[0]?.url,
        },
        `${o.by} took custody ${Math.round((this.deps.now() - o.at) / 60_000)} min ago and the hub has not acknowledged it (deadline ${Math.round(o.deadlineMs / 60_000)} min): sending it again by ${ordered[0]?.url === o.by ? 'the same upstream (no other)' : ordered[0]?.url}`,
      );
    return ordered;
  }

  /** The index of the first upstream answering a probe, or -1. */
  private async firstAnswering(
    errors: string[],
    refusals: Refusal[],
    onReachable?: () => void,
  ): Promise<number> {
    for (const [i, up] of this.deps.uplinks.entries())
      if (await this.answers(up, errors, refusals, onReachable)) return i;
    return -1;
  }

  /**
   * Probes an upstream: one that answers is no longer suspect (and `onReachable` hears it at once, before
   * the push goes: the loop's pulls go beside it); one that does not is, with the failure recorded.
   */
  private async answers(
    up: Uplink,
    errors: string[],
    refusals: Refusal[],
    onReachable?: () => void,
  ): Promise<boolean> {
    const probe = await up.probe();
    if (probe.ok) {
      this.suspect.delete(up.url);
      onReachable?.();
      return true;
    }
    this.failed(up, probe, errors, refusals);
    return false;
  }

  /**
   * The agent is stopping: every exchange in progress is cut (what it carried goes again at the next
   * start) instead of waited for, and a cut one is not its upstream's failure.
   */
  abortExchanges(): void {
    this.stopping = true;
    for (const u of this.deps.uplinks) u.abort?.();
  }

  /** A push or probe that failed: a refusal of the credential (401/403, issue 42) or another failure. */
  private failed(
    up: Uplink,
    r: { error: string; status?: number; stalled?: boolean },
    errors: string[],
    refusals: Refusal[],
  ): void {
    // cut by the agent's own stop: the upstream did nothing wrong (`status` would say DOWN until the next push)
    if (this.stopping) return;
    this.suspect.add(up.url);
    // an answer due at once that did not begin in time (decision 515): a stall, counted as a downlink's is
    if (r.stalled) this.deps.store.recordStall(up.url, r.error);
    else this.deps.store.recordPushFailure(up.url, r.error);
    if (r.status === 401 || r.status === 403)
      refusals.push({ upstream: up.url, reason: refusalReason(r.error) });
    else errors.push(`${up.url}: ${r.error}`);
  }

  private async sign(
    delta: PendingDelta,
  ): Promise<{ id: string; bytes: Uint8Array; delta: PendingDelta; sentAt: number }> {
    const id = this.deps.newBundleId();
    const sentAt = this.deps.now();
    const header: BundleHeader & { kind: 'doc-delta' } = {
      id: id as BundleHeader['id'],
      kind: 'doc-delta',
      source: { site: this.deps.site, agent: this.deps.agent } as BundleHeader['source'],
      destination: 'hub',
      created: sentAt,
      lifetimeS: this.deps.lifetimeS ?? 30 * 86_400,
      priority: delta.hasFailure ? 'failure' : 'status',
      doc: delta.docId,
      heads: delta.heads,
    };
    const payload = {
      epoch: delta.epoch,
      changes: delta.changes,
      blobs: delta.blobs,
      sealed: delta.sealed || undefined,
    };
    return { id, bytes: await encodeBundle(header, payload, this.deps.privateKey), delta, sentAt };
  }

  /**
   * Fetches this site's downlink from every upstream that answers (decision 300: one that eats it cannot
   * shadow an honest one), side by side, each with its own cursor; what came twice is acted on once.
   * Hub acks prune, plan requests for listed cells run, others are refused. `upstream`: the first answering.
   * With `only`, that upstream alone: each upstream's downlink is then a lane of its own, which never
   * waits for another's (docs/decisions/410-independent-downlinks.md).
   */
  async pullOnce(hold?: { waitS: number; signal?: AbortSignal }, only?: string): Promise<PullOutcome> {
    const out: PullOutcome = {
      upstream: null,
      acks: 0,
      planRequests: 0,
      approvals: 0,
      refused: 0,
      rejections: 0,
      resumed: false,
      errors: [],
    };
    const uplinks = only === undefined ? this.deps.uplinks : this.deps.uplinks.filter((u) => u.url === only);
    const answered = await Promise.all(
      uplinks.map(async (up) => {
        const sent = this.deps.store.downlinkCursor(up.url);
        // After a failure (a revoked token since replaced, an upstream back), one pull is answered at once:
        // `status` then says the upstream works now, not when a held pull ends, hours later perhaps. Only
        // one: a pull beside it is held, so control that reaches the upstream while the prompt answer
        // travels finds a pull there (docs/decisions/645-pulls-go-as-the-window-opens.md).
        const prompt =
          hold !== undefined &&
          hold.waitS > 0 &&
          this.deps.store.upstreamDown(up.url) &&
          !this.prompting.has(up.url);
        const asked = hold && { ...hold, ...(prompt ? { waitS: 0 } : {}) };
        if (prompt) this.prompting.add(up.url);
        // A held pull names its agent: the upstream then keeps two of them (decision 340).
        const r = await up
          .pullDownlink(this.deps.site, sent, asked && { ...asked, holder: this.deps.agent })
          .finally(() => {
            if (prompt) this.prompting.delete(up.url);
          });
        if (!r.ok) {
          // a pull the agent cut itself (its stop, a standing run that ended) says nothing of the upstream
          const ours = hold?.signal?.aborted === true || this.stopping;
          if (ours) {
            // cut by the agent itself: nothing to say of the upstream
          } else if (r.status === 401 || r.status === 403)
            out.refusals = [...(out.refusals ?? []), { upstream: up.url, reason: refusalReason(r.error) }];
          else out.errors.push(`${up.url}: ${r.error}`);
          if (r.stalled) {
            // cut for making no progress: counted, and `status` names the upstream (decision 410)
            out.stalled = [...(out.stalled ?? []), up.url];
            this.deps.store.recordStall(up.url, r.error);
            this.deps.log.warn(
              { upstream: up.url, err: r.error },
              `downlink from ${up.url} stalled and was cut; other upstreams are not held up by it`,
            );
          } else if (!ours) this.deps.store.recordPullResult(up.url, r.error);
          return false;
        }
        this.deps.store.recordPullResult(up.url, null);
        const { heldS, keep, holdMaxS } = r.value;
        // an answer at once says nothing of how long this upstream holds
        if (r.value.held) Object.assign(out, { held: true, ...(prompt ? {} : { heldS }), keep, holdMaxS });
        for (const bytes of r.value.bundles) await this.downlink.handleInTurn(bytes, out, up.url);
        for (const n of r.value.refusals ?? []) this.downlink.onRelayRefusal(n, out, up.url);
        const held = this.deps.store.downlinkCursor(up.url);
        const bundles = r.value.bundles.length;
        this.deps.store.setDownlinkCursor(up.url, laterCursor(held, sent, r.value.cursor, bundles));
        return true;
      }),
    );
    out.upstream = uplinks[answered.indexOf(true)]?.url ?? null;
    return out;
  }

  /** Uploads detail blobs the upstream does not hold yet, lowest priority: call after push and pull. */
  uploadBlobsOnce(
    onProgress?: (sha256: string, sent: number, total: number) => void,
    signal?: AbortSignal,
    /** Asked before each blob: true when a result waits to be pushed first, and the uploads stop. */
    yieldToResults?: () => boolean,
  ): Promise<number> {
    return uploadBlobsOnce(this.deps, onProgress, signal, yieldToResults);
  }
}

/** What an upstream's 401/403 said, without the status its log line already implies. */
const refusalReason = (error: string) => error.replace(/^HTTP 40[13] /, '');
