import * as A from '@automerge/automerge';
import { createHopServer, type HopServer, MemoryHopBackend } from '@driftline/hop';
import {
  type BundleHeader,
  decodeBundle,
  decodePayload,
  encodeBundle,
  generateSigningKeyPair,
  type SigningKeyPair,
  verifyBundle,
} from '@driftline/protocol';
import { tempDir } from './storeFixtures.js';

/**
 * A hub stand-in over the real hop server: verifies the agent's signatures, applies deltas to replicas
 * (as the hub does) and queues acks signed with its own key on the site's downlink.
 */
export class TestHub {
  readonly backend = new MemoryHopBackend({ name: 'test-hub', role: 'hub' });
  readonly replicas = new Map<string, A.Doc<unknown>>();
  readonly rejected: string[] = [];
  private applied = new Set<string>();
  private seq = 0;
  server!: HopServer;
  url = '';
  /** Exchanges the server has answered (or dropped) so far; `served` waits on the next one. */
  private exchanges = 0;
  private onExchange: Array<() => void> = [];

  private constructor(
    readonly keys: SigningKeyPair,
    readonly agentKey: CryptoKey,
  ) {}

  static async start(agentKey: CryptoKey, token = 'agent-token'): Promise<TestHub> {
    const hub = new TestHub(await generateSigningKeyPair(), agentKey);
    hub.backend.addToken(token, { name: 'ship-7', sites: ['ship-7'] });
    hub.server = createHopServer(hub.backend, { uploads: { directory: tempDir('driftline-tus-') } });
    hub.url = (await hub.server.listen(0, '127.0.0.1')).url;
    hub.server.server.on('request', (_req, res) =>
      res.once('close', () => {
        hub.exchanges++;
        for (const r of hub.onExchange.splice(0)) r();
      }),
    );
    return hub;
  }

  /**
   * `f`'s first truthy answer: asked now, then again after each exchange the server answers (what the
   * agent sends or fetches is the only thing that changes what `f` reads), never on a timer. `stopped`
   * (the agent's exit, say) ends the wait with an error naming `what`; the test's timeout bounds the rest.
   */
  async served<T>(
    what: string,
    f: () => T | false | undefined | Promise<T | false | undefined>,
    stopped?: Promise<unknown>,
  ): Promise<T> {
    let ended = false;
    const end = stopped?.then(() => {
      ended = true;
    });
    for (;;) {
      const seen = this.exchanges;
      const v = await f();
      if (v) return v;
      if (ended) throw new Error(`gave up waiting for ${what}: the agent stopped`);
      if (this.exchanges === seen)
        await Promise.race([new Promise<void>((r) => this.onExchange.push(r)), end]);
    }
  }

  /** Processes what arrived: verify, merge, queue an ack per document. Returns acks queued. */
  async processArrivals(): Promise<number> {
    let acks = 0;
    for (const [id, bytes] of this.backend.stored) {
      if (this.applied.has(id)) continue;
      this.applied.add(id);
      const d = decodeBundle(bytes);
      if (!d.ok || !(await verifyBundle(d.value, this.agentKey))) {
        this.rejected.push(id);
        continue;
      }
      const p = decodePayload('doc-delta', d.value.payload);
      if (!p.ok) throw p.error;
      const doc = d.value.header.doc!;
      const replica = A.loadIncremental(this.replicas.get(doc) ?? A.init(), p.value.changes);
      this.replicas.set(doc, replica);
      await this.queueAck(doc, A.getHeads(replica), [...this.backend.blobData.keys()]);
      acks++;
    }
    return acks;
  }

  async queueAck(
    doc: string,
    heads: string[],
    blobs: string[] = [],
    key: CryptoKey = this.keys.privateKey,
  ): Promise<void> {
    this.seq++;
    const header = this.header('ack', this.seq, { site: 'ship-7', agent: 'a1' }, doc, heads);
    this.backend.enqueueDownlink(
      'ship-7',
      await encodeBundle(header, { agent: 'a1', doc, heads, blobs, committedAt: Date.now() } as never, key),
    );
  }

  async queuePlanRequest(
    environment: string,
    component: string,
    requestId: string,
    key: CryptoKey = this.keys.privateKey,
  ): Promise<void> {
    this.seq++;
    const header = this.header('control', this.seq, { site: 'ship-7' });
    const now = Date.now();
    const payload = {
      type: 'plan-request',
      requestId,
      site: 'ship-7',
      environment,
      component,
      requestedAt: now,
      expiresAt: now + 3600_000,
    };
    this.backend.enqueueDownlink('ship-7', await encodeBundle(header, payload as never, key));
  }

  /** Queues a rejection of bundles of ship-7/a1 (what the hub sends for a bundle it refuses). */
  async queueRejection(
    code: string,
    bundleIds: string[],
    opts: { key?: CryptoKey; at?: number; agent?: string } = {},
  ): Promise<void> {
    this.seq++;
    const agent = opts.agent ?? 'a1';
    const header = this.header('control', this.seq, { site: 'ship-7', agent });
    const at = opts.at ?? Date.now();
    const payload = {
      type: 'rejection',
      site: 'ship-7',
      agent,
      code,
      bundleIds,
      count: bundleIds.length,
      firstAt: at,
      lastAt: at,
    };
    this.backend.enqueueDownlink(
      'ship-7',
      await encodeBundle(header, payload as never, opts.key ?? this.keys.privateKey),
    );
  }

  /** Queues a relayed approval for ship-7 (the hub's signature says only that the hub relayed it). */
  async queueApproval(approval: unknown, opts: { key?: CryptoKey; site?: string } = {}): Promise<void> {
    this.seq++;
    const header = this.header('control', this.seq, { site: 'ship-7' });
    const payload = { type: 'approval', site: opts.site ?? 'ship-7', approval };
    this.backend.enqueueDownlink(
      'ship-7',
      await encodeBundle(header, payload as never, opts.key ?? this.keys.privateKey),
    );
  }

  private header(kind: 'ack' | 'control', seq: number, destination: object, doc?: string, heads?: string[]) {
    return {
      id: `01JD${String(seq).padStart(22, '0')}`,
      kind,
      source: 'hub',
      destination,
      created: Date.now(),
      lifetimeS: 3600,
      priority: 'control',
      ...(doc ? { doc, heads } : {}),
    } as unknown as BundleHeader & { kind: typeof kind };
  }

  close(): Promise<void> {
    return this.server.close();
  }
}
