import { connect, createServer, type Server, type Socket } from 'node:net';
import * as A from '@automerge/automerge';

/**
 * The baseline: Automerge's own sync protocol (`generateSyncMessage`/`receiveSyncMessage`) over a
 * persistent duplex TCP stream of length-prefixed messages, as automerge-repo runs it over a WebSocket.
 * A fresh sync state per connection (automerge-repo's default on reconnect). Optional chaos at the
 * sender: duplicate a message, or hold one back and send it after the next (reordering).
 */
export interface Chaos {
  duplicate: number;
  reorder: number;
  random: () => number;
}

/** The baseline's documents: sync moves their changes; the benchmarks only look for `runs`. */
type Doc = A.Doc<{ runs?: Record<string, unknown> }>;

class Conn {
  state = A.initSyncState();
  private buf = Buffer.alloc(0);
  private held: Buffer | null = null;
  constructor(
    readonly socket: Socket,
    private readonly node: SyncNode,
    private readonly chaos?: Chaos,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      while (this.buf.length >= 4) {
        const len = this.buf.readUInt32BE(0);
        if (this.buf.length < 4 + len) break;
        const msg = new Uint8Array(this.buf.subarray(4, 4 + len));
        this.buf = this.buf.subarray(4 + len);
        try {
          this.node.receive(this, msg);
        } catch (e) {
          this.node.errors.push((e as Error).message);
          socket.destroy();
          return;
        }
      }
    });
  }
  private write(frame: Buffer): void {
    if (!this.socket.destroyed) this.socket.write(frame);
  }
  send(msg: Uint8Array): void {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(msg.length);
    const frame = Buffer.concat([len, msg]);
    this.node.messagesSent++;
    const c = this.chaos;
    if (c && !this.held && c.random() < c.reorder) {
      this.held = frame; // goes out after the next message
      setTimeout(() => this.flushHeld(), 200);
      return;
    }
    this.write(frame);
    this.flushHeld();
    if (c && c.random() < c.duplicate) this.write(frame);
  }
  private flushHeld(): void {
    const h = this.held;
    this.held = null;
    if (h) this.write(h);
  }
}

/** One replica with any number of sync connections (a relay-like middle node has two). */
export class SyncNode {
  conns = new Set<Conn>();
  errors: string[] = [];
  messagesSent = 0;
  private servers: Server[] = [];
  private stopped = false;
  onChange: (doc: Doc) => void = () => {};

  constructor(
    public doc: Doc,
    private readonly chaos?: Chaos,
  ) {}

  private add(socket: Socket): Conn {
    const c = new Conn(socket, this, this.chaos);
    this.conns.add(c);
    socket.on('close', () => this.conns.delete(c));
    socket.on('error', () => {});
    this.flush(c);
    return c;
  }

  receive(from: Conn, msg: Uint8Array): void {
    const before = A.getHeads(this.doc);
    const [doc, state] = A.receiveSyncMessage(this.doc, from.state, msg);
    this.doc = doc;
    from.state = state;
    const changed = A.getHeads(doc).join() !== before.join();
    if (changed) this.onChange(doc);
    for (const c of this.conns) if (c === from || changed) this.flush(c);
  }

  /** A local change: offer it on every connection. */
  update(doc: Doc): void {
    this.doc = doc;
    for (const c of this.conns) this.flush(c);
  }

  flush(c: Conn): void {
    for (let i = 0; i < 100; i++) {
      const [state, msg] = A.generateSyncMessage(this.doc, c.state);
      c.state = state;
      if (!msg) return;
      c.send(msg);
    }
  }

  async listen(): Promise<number> {
    const server = createServer((s) => this.add(s));
    this.servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return (server.address() as { port: number }).port;
  }

  /** Keeps one connection open to `port`, reconnecting `retryMs` after any close or refusal. */
  dial(port: number, retryMs = 100): void {
    const attempt = () => {
      if (this.stopped) return;
      const s = connect(port, '127.0.0.1');
      s.on('connect', () => this.add(s));
      s.on('error', () => {});
      s.on('close', () => setTimeout(attempt, retryMs));
    };
    attempt();
  }

  close(): void {
    this.stopped = true;
    for (const c of this.conns) c.socket.destroy();
    for (const s of this.servers) s.close();
  }
}
