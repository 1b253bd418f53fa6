import { ackLaterField, encodePush, pushFormsOf } from '@driftline/hop';
import { type HopClient, type HopFailure, readRefusalsJson } from '@driftline/hop/client';
import {
  type BundleHeader,
  type DocDeltaPayload,
  decodeBatch,
  decodeBundle,
  decodePayload,
  type Receipt,
  type RelayRefusal,
  SIGNATURE_BYTES,
  wire2,
} from '@driftline/protocol';
import type { HeartbeatForm } from '../../core/doc/heartbeatRound.js';
import type { DownlinkPage, UplinkResult } from '../../ports/Uplink.js';
import type { Wire2State } from './wire2State.js';

const refusalsOf = (json: string | undefined): { refusals?: RelayRefusal[] } => {
  const refusals = readRefusalsJson(json);
  return refusals.length > 0 ? { refusals } : {};
};

/** After an upstream said it speaks v1 only, it is asked again this much later (decision 490 §5). */
const ASK_AGAIN_MS = 86_400_000;
/**
 * A registration is renewed this long after it was made: what the upstream states (`carries`, `pushForms`)
 * follows its own upgrades and its hub's within a day, not only at the agent's restart (decision 510).
 */
export const REGISTER_AGAIN_MS = 86_400_000;
/** A renewal that failed (busy, unreachable) is tried again this much later; the old one serves meanwhile. */
const RENEW_RETRY_MS = 600_000;

export interface Wire2LinkOptions {
  site: string;
  agent: string;
  privateKey: CryptoKey;
  /** `ed25519:…`: the key the hub enrolled for this agent. */
  publicKey: string;
  /** The agent's sequences and pushes, shared by its upstreams (one stream to the hub). */
  state: Wire2State;
  now: () => number;
  /**
   * A delta as a v2 push carries it when its last change is a quiet round's heartbeat change (the ledger's
   * `heartbeatForm`, decision 500); used once a hub ack said the hub rebuilds heartbeats.
   */
  heartbeatForm?: (epoch: number, changes: Uint8Array) => HeartbeatForm | null;
  /**
   * Seconds within which more of a cron round follows (the ledger's `ackLaterS`): a push then asks its ack
   * to come with the next push, where every node on the way reads that (decision 525).
   */
  ackLaterS?: () => number | undefined;
}

const asUplink = (f: HopFailure): UplinkResult<never> => ({
  ok: false,
  error: f.message,
  retryable: f.retryable,
  ...(f.status === undefined ? {} : { status: f.status }),
  // a pull's answer cut for making no progress (decision 410), as v1's
  ...(f.code === 'stalled' ? { stalled: true } : {}),
});

/**
 * Why a push's 200 answer is not the node's custody of push `seq` (decision 495): not a custody message,
 * not from the node this agent registered with, not to this agent, or not covering `seq`. Null: it is.
 * The node's signature is not checked (the agent pins no relay key): this refuses what is plainly not
 * custody (a proxy's page, another agent's answer), as v1 reads its receipts.
 */
export function custodyProblem(body: Uint8Array, info: wire2.Wire2Info, seq: number): string | null {
  const m = wire2.decodeMessage(body);
  if (!m.ok) return m.error.message;
  if (m.value.kind !== 'custody') return `a ${m.value.kind} message`;
  if (m.value.from !== info.node) return `from node ${m.value.from}, not ${info.node}`;
  if (m.value.to !== info.from) return `to ${m.value.to}, not this agent's ${info.from}`;
  const upTo = (m.value.body as wire2.CustodyBody).upTo;
  return upTo < seq ? `custody up to ${upTo}, not ${seq}` : null;
}

/**
 * Hop v2 on the agent's link (docs/decisions/495-hop-v2-on-the-agent-link.md): registers the agent's key
 * with the upstream once (with its token), then sends each round's delta as one signed push and each pull
 * as one signed message, no bearer token and no v1 heads. An upstream that does not speak v2 (404) is
 * asked again a day later; meanwhile `ready()` is null and the caller speaks v1.
 */
export class Wire2Link {
  private info: wire2.Wire2Info | null = null;
  private askedAt = Number.NEGATIVE_INFINITY;
  /** When {@link info} is registered again ({@link REGISTER_AGAIN_MS} on, sooner after a failed renewal). */
  private renewAt = Number.NEGATIVE_INFINITY;
  /** Since when v2 has been spoken with this node (a renewal keeps it: `edge-agent status` says so). */
  private since = 0;
  private registering: Promise<wire2.Wire2Info | null> | null = null;

  constructor(
    private readonly client: HopClient,
    private readonly o: Wire2LinkOptions,
  ) {}

  /** The upstream's v2 info, registering first when needed; null: speak v1 to it for now. */
  async ready(): Promise<wire2.Wire2Info | null> {
    if (this.info && this.o.now() < this.renewAt) return this.info;
    // one registration at a time: a push and held pulls may all ask at once
    this.registering ??= this.register().finally(() => {
      this.registering = null;
    });
    return this.registering;
  }

  /** Registers (again, a day after the last: {@link REGISTER_AGAIN_MS}); what `ready` answers. */
  private async register(): Promise<wire2.Wire2Info | null> {
    const was = this.info;
    if (!was && this.o.now() - this.askedAt < ASK_AGAIN_MS) return null;
    const named = { site: this.o.site, agent: this.o.agent, publicKey: this.o.publicKey };
    const r = await this.client.registerWire2(await wire2.signRegistration(named, this.o.privateKey));
    if (r.ok) {
      this.info = r.value;
      this.renewAt = this.o.now() + REGISTER_AGAIN_MS;
      if (was?.node !== r.value.node) this.since = this.o.now();
      const carrier = this.client.wire2Carrier();
      this.o.state.noteLink(this.client.url, {
        wire: 2,
        node: r.value.node,
        since: this.since,
        ...carrier,
        ...(r.value.carries?.length ? { carries: [...r.value.carries] } : {}),
      });
    } else if (
      r.status !== undefined &&
      r.status >= 400 &&
      r.status < 500 &&
      r.status !== 401 &&
      r.status !== 429
    ) {
      // A node without v2 (or a relay whose hub has none) answers 404; a refused registration (a short id
      // taken, a key not the enrolled one) is not mended by asking again at once: v1 for a day, said in
      // status. A token refused (401), a busy or starting node: v1 for this exchange, asked again next time.
      this.fallBack(r.message);
    } else if (was) {
      // renewing failed for now (busy, unreachable, a token being rotated): as it was, asked again soon
      this.renewAt = this.o.now() + RENEW_RETRY_MS;
    }
    return this.info;
  }

  /** Each doc-delta of a v1 batch as one v2 push; a receipt each, as v1's answer gives them. */
  async push(batch: Uint8Array): Promise<UplinkResult<Receipt[]> | null> {
    const info = await this.ready();
    const bundles = decodeBatch(batch);
    if (!info || !bundles.ok) return null;
    const deltas = [];
    for (const bytes of bundles.value) {
      const b = decodeBundle(bytes);
      const p =
        b.ok && b.value.header.kind === 'doc-delta' ? decodePayload('doc-delta', b.value.payload) : null;
      if (!b.ok || !p?.ok) return null; // not a delta this agent made: v1 carries the whole batch
      deltas.push({ header: b.value.header, payload: p.value });
    }
    try {
      return await this.pushEach(info, deltas);
    } finally {
      this.o.state.flush(); // the batch's pushes, one write of the state file
    }
  }

  private async pushEach(
    info: wire2.Wire2Info,
    deltas: { header: BundleHeader; payload: DocDeltaPayload }[],
  ): Promise<UplinkResult<Receipt[]> | null> {
    const by = info.node === wire2.HUB_NODE_ID ? 'hub' : `node ${info.node}`;
    // the compact forms every node on the way to the hub reads (decision 510)
    const forms = pushFormsOf(info.pushForms);
    const ackLaterS = forms.ackLater ? this.o.ackLaterS?.() : undefined;
    const receipts: Receipt[] = [];
    for (const [index, { header, payload }] of deltas.entries()) {
      const seq = this.o.state.seq();
      const hb = this.o.state.rebuildsHeartbeats
        ? this.o.heartbeatForm?.(payload.epoch, payload.changes)
        : null;
      // the agent's clock minus this node's, from the node's custody stamps, as v1's `driftline-clock`:
      // written only where every node on the way reads it (forms.clock)
      const message = await encodePush(
        { ...payload, ...(hb ?? {}), priority: header.priority },
        { from: info.from, seq, t0: this.o.now(), clock: this.client.clock(), ackLaterS },
        this.o.privateKey,
        forms,
      );
      // the hub's ack names this push by its sequence and signature: what it carried is pruned then. Not
      // a push of no change (a blob announced again): an ack of it says nothing of the heads, and an older
      // hub named one after a lost push, so the lost run was taken as acknowledged (decision 495); its ack
      // is passed over, the blob announced again later
      const signature = message.subarray(message.length - SIGNATURE_BYTES);
      if (payload.changes.length > 0 || hb)
        this.o.state.notePush(seq, await wire2.messageTip(signature), {
          doc: header.doc ?? '',
          heads: [...(header.heads ?? [])],
        });
      const r = await this.exchange(message);
      if (r.ok) {
        // more of the round follows: a node stating `custody-later` holds the push and says so by 204, its
        // custody of the round's next push (cumulative) covering this one (decision 530)
        if (forms.custodyLater && ackLaterField(forms, ackLaterS) && r.value.status === 204) {
          receipts.push({ bundleId: header.id, index, status: 'stored', by });
          continue;
        }
        // the node's word that it holds this push: its custody message, to this agent, covering this seq
        const wrong = custodyProblem(r.value.body, info, seq);
        if (wrong)
          return {
            ok: false,
            error: `the upstream's answer to push ${seq} is not its custody of it (${wrong}): sent again later`,
            retryable: true,
          };
        receipts.push({ bundleId: header.id, index, status: 'stored', by });
        continue;
      }
      // an upstream that stopped speaking v2: v1 carries the batch (what went already is a duplicate there)
      if (this.stoppedV2(r)) return null;
      // A refusal of this push is its receipt, as v1's (a signature that does not verify, an agent the hub
      // revoked: the hub's signed rejection follows on the downlink). The credential's (401, a peer that
      // may not act for the site: 403 forbidden), a node down or busy fail the request.
      const credential = r.status === 401 || (r.status === 403 && r.code === 'forbidden');
      const refusal = r.status !== undefined && r.status < 500 && r.status !== 429 && !credential;
      if (!refusal) return asUplink(r);
      const code = (r.code as Receipt['code']) ?? 'bad-request';
      receipts.push({ bundleId: header.id, index, status: 'rejected', code, message: r.message, by });
    }
    return { ok: true, value: receipts };
  }

  /** One pull of the site's downlink after `after`, held up to `hold.waitS` while nothing is due. */
  async pull(
    after: string | undefined,
    hold?: { waitS: number; signal?: AbortSignal },
  ): Promise<UplinkResult<DownlinkPage> | null> {
    const info = await this.ready();
    if (!info) return null;
    const have = Number(after ?? '0');
    if (!Number.isSafeInteger(have) || have < 0) return null;
    const holdS = Math.max(0, Math.min(Math.round(hold?.waitS ?? 0), info.maxHoldS));
    const message = await wire2.encodeMessage(
      { kind: 'pull', from: info.from, to: info.node, seq: this.o.state.seq(), body: { have, holdS } },
      this.o.privateKey,
    );
    const r = await this.exchange(message, hold?.signal, holdS, true);
    if (!r.ok) return this.stoppedV2(r) ? null : asUplink(r);
    const stated = {
      ...(hold ? { held: true, heldS: holdS, keep: info.keep } : {}),
      holdMaxS: info.maxHoldS,
    };
    if (r.value.status === 204 || r.value.body.length === 0)
      return { ok: true, value: { bundles: [], cursor: String(have), ...stated } };
    const a = wire2.decodePullAnswer(r.value.body);
    if (!a.ok) return { ok: false, error: `the v2 pull answer: ${a.error.message}`, retryable: true };
    return {
      ok: true,
      value: {
        bundles: a.value.items,
        cursor: String(a.value.cursor),
        ...stated,
        ...refusalsOf(a.value.refusals),
      },
    };
  }

  /** One exchange; a sender the upstream no longer knows (it lost its keys) registers again, once. */
  private async exchange(message: Uint8Array, signal?: AbortSignal, holdS = 0, pull = false) {
    const r = await this.client.exchangeWire2(message, signal, holdS, pull);
    if (r.ok || r.status !== 401 || !this.info) return r;
    this.info = null;
    this.askedAt = Number.NEGATIVE_INFINITY;
    return (await this.ready()) ? this.client.exchangeWire2(message, signal, holdS, pull) : r;
  }

  /** v1 with this upstream for a day ({@link ASK_AGAIN_MS}), and why, for `edge-agent status`. */
  private fallBack(why: string): void {
    this.info = null;
    this.askedAt = this.o.now();
    const again = new Date(this.askedAt + ASK_AGAIN_MS).toISOString();
    const reason = `the upstream does not take hop v2 from this agent (${why.slice(0, 160)}); asked again ${again}`;
    this.o.state.noteLink(this.client.url, { wire: 1, reason, at: this.askedAt });
  }

  /** An upstream that stopped speaking v2 (404, or a version it does not read): v1 from now, for a day. */
  private stoppedV2(r: HopFailure): boolean {
    if (r.status !== 404 && r.code !== 'unsupported-version') return false;
    this.fallBack(r.message);
    return true;
  }
}
