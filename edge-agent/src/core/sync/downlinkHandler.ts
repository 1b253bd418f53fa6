import { createHash } from 'node:crypto';
import {
  type AgentId,
  type BundleHeader,
  decodeBundle,
  decodePayload,
  type RejectionPayload,
  type RelayRefusal,
  type Sha256,
  sha256Hex,
  toHex,
  verifyBundle,
  wire2,
} from '@driftline/protocol';
import { SeenBundles } from './downlinkAnswers.js';
import type { PullOutcome, SyncDeps } from './syncContract.js';

/**
 * What comes down to this agent (SyncEngine's pulls): each bundle verified against the pinned hub key,
 * then handled — acks, detail manifests, plan requests, approvals, rejections — one at a time across
 * upstreams, a bundle two answers carry handled once (decision 340); and relays' refusal notices.
 */
export class DownlinkHandler {
  /** The downlink bundle being handled (`handleInTurn`): one at a time across upstreams. */
  private handling: Promise<void> = Promise.resolve();
  /** Downlink bundles handled lately: a second answer carrying one again costs nothing (decision 340). */
  private readonly seen = new SeenBundles();

  constructor(private readonly deps: SyncDeps) {}

  /** One bundle at a time across upstreams: the same approval twice meets the record the first left. */
  handleInTurn(bytes: Uint8Array, out: PullOutcome, upstream: string): Promise<void> {
    const p = this.handling.then(() => this.handleDownlink(bytes, out, upstream));
    this.handling = p.catch(() => {});
    return p;
  }

  /**
   * One downlink bundle from `upstream`. Nothing is remembered by bundle id before the hub's signature
   * verified: an altered copy under a genuine id is refused (logged with the upstream that served it) and
   * the genuine copy, from this or another upstream, is still taken (docs/decisions/220).
   */
  private async handleDownlink(bytes: Uint8Array, out: PullOutcome, upstream: string): Promise<void> {
    if (wire2.isWire2Message(bytes)) return this.handleWire2(bytes, out, upstream);
    const d = decodeBundle(bytes);
    if (!d.ok) {
      this.deps.log.warn({ code: d.error.code, upstream }, `downlink bundle refused: ${d.error.message}`);
      out.refused++;
      return;
    }
    const { header } = d.value;
    const forUs =
      header.destination !== 'hub' &&
      header.destination.site === this.deps.site &&
      (!header.destination.agent || header.destination.agent === this.deps.agent);
    if (!forUs) return; // another agent's ack at the same site
    const digest = await sha256Hex(bytes);
    if (this.seen.has(header.id, digest)) return; // a second answer with the same bundle (decision 340)
    if (header.source !== 'hub' || !(await verifyBundle(d.value, this.deps.hubPublicKey))) {
      this.deps.log.warn(
        { bundleId: header.id, kind: header.kind, upstream },
        'downlink bundle refused: not signed by the pinned hub key (altered on the way, or forged by that upstream)',
      );
      out.refused++;
      return;
    }
    if (this.seen.handled(header.id)) return; // the same bundle, signed again: handled once
    await this.handleVerified(header, d.value.payload, out);
    this.seen.add(header.id, digest);
  }

  /**
   * The hub's v2 message (docs/decisions/495-hop-v2-on-the-agent-link.md, 505): signed by the pinned hub
   * key, then an ack or a publication. Anything else, or another key's, is refused and logged.
   */
  private async handleWire2(bytes: Uint8Array, out: PullOutcome, upstream: string): Promise<void> {
    const m = wire2.decodeMessage(bytes);
    const kind = m.ok ? m.value.kind : null;
    if (!m.ok || (kind !== 'ack' && kind !== 'publication') || m.value.from !== wire2.HUB_NODE_ID) {
      this.deps.log.warn(
        { upstream },
        `downlink message refused: ${m.ok ? `a ${m.value.kind} from ${m.value.from}` : m.error.message}`,
      );
      out.refused++;
      return;
    }
    if (!(await wire2.verifyMessage(m.value, this.deps.hubPublicKey))) {
      this.deps.log.warn(
        { upstream },
        `downlink ${kind} refused: not signed by the pinned hub key (altered on the way, or forged by that upstream)`,
      );
      out.refused++;
      return;
    }
    if (m.value.kind === 'publication') this.onPublication(m.value, upstream);
    else this.onAck(m.value.body as wire2.AckBody, out);
  }

  /**
   * The hub's compact publication manifest (decision 505), for this site only (`to` its short id: a copy
   * of another site's, replayed here by a relay, is passed over), taken as v1's signed `blob` manifest.
   */
  private onPublication(m: wire2.DecodedMessage, upstream: string): void {
    if (m.to !== this.deps.siteShortId) {
      this.deps.log.warn({ upstream, to: m.to }, 'downlink publication passed over: it names another site');
      return;
    }
    const manifest = wire2.manifestOfPublication(m.body as wire2.PublicationBody, (b) =>
      createHash('sha256').update(b).digest('hex'),
    );
    this.deps.onBlobManifest?.(manifest);
  }

  /**
   * The hub's ack of a hop v2 push, naming one of this agent's pushes by sequence and signature (`tip`):
   * what that push carried is acknowledged, as a v1 ack of the same heads would. Another agent's ack at the
   * site (or one this agent no longer remembers: it pushed again since, and that push's ack will come) is
   * passed over.
   */
  private onAck(ack: wire2.AckBody, out: PullOutcome): void {
    const pushed = this.deps.wire2?.acked(ack.upTo, ack.tip, ack.heartbeats === true);
    if (!pushed) return;
    const blobs: Sha256[] = [];
    for (let i = 0; ack.blobs && i < ack.blobs.length; i += 32)
      blobs.push(toHex(ack.blobs.subarray(i, i + 32)) as Sha256);
    const r = this.deps.store.applyAck({
      agent: this.deps.agent as AgentId,
      doc: pushed.doc,
      heads: pushed.heads,
      blobs,
      committedAt: ack.committedAt,
      ...(ack.readsConfirmed ? { readsConfirmed: true as const } : {}),
    });
    this.deps.log.info({ doc: pushed.doc, push: ack.upTo, ...r }, 'hub acknowledged');
    out.acks++;
    if (r.rejectionsCleared > 0) out.resumed = true;
  }

  /** A downlink bundle the pinned hub key signed, for this agent. */
  private async handleVerified(header: BundleHeader, payload: Uint8Array, out: PullOutcome): Promise<void> {
    if (header.kind === 'ack') {
      const p = decodePayload('ack', payload);
      if (!p.ok || p.value.agent !== this.deps.agent) return;
      const r = this.deps.store.applyAck(p.value);
      this.deps.log.info({ doc: p.value.doc, ...r }, 'hub acknowledged');
      out.acks++;
      if (r.rejectionsCleared > 0) {
        this.deps.log.info({ doc: p.value.doc }, 'the hub takes this agent’s bundles again');
        out.resumed = true;
      }
    } else if (header.kind === 'blob') {
      const p = decodePayload('blob', payload);
      if (!p.ok) {
        out.refused++;
        return;
      }
      this.deps.onBlobManifest?.(p.value);
    } else if (header.kind === 'control') {
      const p = decodePayload('control', payload);
      if (!p.ok) {
        out.refused++;
        return;
      }
      if (p.value.type === 'rejection') {
        this.onRejection(p.value, out);
        return;
      }
      if (p.value.type === 'contact-windows') {
        this.deps.onContactWindows?.(p.value);
        return;
      }
      if (p.value.type === 'approval') {
        if (!this.deps.onApproval) {
          this.deps.log.warn({ bundleId: header.id }, 'approval refused: this agent does not apply plans');
          out.refused++;
          return;
        }
        // The moment control reached the site (bench controlLatency reads it).
        this.deps.log.info({ bundleId: header.id }, 'approval received');
        await this.deps.onApproval(p.value);
        out.approvals++;
        return;
      }
      const req = p.value;
      if (req.site !== this.deps.site || !this.deps.allowsCell(req.environment, req.component, req.ref)) {
        this.deps.log.warn(
          { requestId: req.requestId, environment: req.environment, component: req.component, ref: req.ref },
          req.ref
            ? 'plan request refused: the local config does not list this component and environment, or its source.refs do not allow this ref'
            : 'plan request refused: the local config does not list this component and environment',
        );
        this.deps.store.recordPlanRequest(
          req,
          'refused',
          req.ref ? 'ref not allowed by the local config' : 'not in the local config',
        );
        out.refused++;
      } else if (req.expiresAt < this.deps.now()) {
        this.deps.store.recordPlanRequest(req, 'expired', null);
      } else if (this.deps.store.recordPlanRequest(req, 'accepted', null)) {
        this.deps.log.info(
          { requestId: req.requestId, environment: req.environment, component: req.component },
          'plan request received',
        );
        this.deps.onPlanRequest(req);
        out.planRequests++;
      }
    }
  }

  /** A hub refusal of this agent's bundles: recorded for `status`, and the refused changes go up again later. */
  private onRejection(r: RejectionPayload, out: PullOutcome): void {
    if (r.site !== this.deps.site || r.agent !== this.deps.agent) return;
    if (!this.deps.store.recordRejection(r)) return; // a hub ack since then outdated it
    out.rejections++;
    const [held] = this.deps.store.rejections();
    this.deps.log.warn(
      { code: r.code, refused: r.count, bundleIds: r.bundleIds.slice(-5), retryAt: held?.retryAt },
      r.code === 'unknown-agent'
        ? 'the hub does not know this agent: waiting for enrolment (enrol it with the line `edge-agent init` printed); results are kept and sent again'
        : `the hub rejected this agent's bundles (${r.code}); results are kept and sent again`,
    );
  }

  /**
   * A relay's notice that its upstream refused this agent's bundles for good (decision 240): recorded as
   * a rejection, so `status` says what to fix and the changes go up again after `sync.rejectedRetryS`.
   * Not signed by the hub: the upstream this agent chose says so, and a false notice only makes the
   * agent send again sooner (a relay can delay or drop, never cause, anything: S6 in docs/architecture.md#invariants).
   */
  onRelayRefusal(n: RelayRefusal, out: PullOutcome, upstream: string): void {
    if (n.site !== this.deps.site || n.agent !== this.deps.agent) return;
    const { relay, by, message, ...rest } = n;
    if (!this.deps.store.recordRejection({ type: 'rejection', ...rest })) return; // seen, or outdated by an ack
    out.rejections++;
    const [held] = this.deps.store.rejections();
    this.deps.log.warn(
      {
        code: n.code,
        refused: n.count,
        relay,
        by,
        upstream,
        bundleIds: n.bundleIds.slice(-5),
        retryAt: held?.retryAt,
      },
      `relay '${relay}' says '${by}' refused this agent's bundles for good (${n.code}): ${message} — fix that there; results are kept and sent again`,
    );
  }
}
