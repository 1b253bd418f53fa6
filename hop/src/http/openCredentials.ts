import type { HopBackend } from '../ports/HopBackend.js';

/** How often the tokens of open held pulls and uploads are checked again, ms (decision 411). */
export const RECHECK_MS = 1000;

/**
 * The bearer tokens of requests that stay open (held downlink pulls, tus uploads), each checked again
 * against the backend every `recheckMs` while any is open: a token revoked (`relay token revoke`,
 * `hub peer revoke`) or rotated out past its grace closes its requests at once, not at their end
 * (docs/decisions/411-revocation-cuts-at-once.md). The revocation is a write to the node's store by
 * another process, so the store is asked again; one lookup per distinct token per check.
 */
export class OpenCredentials {
  private readonly open = new Map<string, Set<() => void>>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private checking = false;

  constructor(
    private readonly backend: Pick<HopBackend, 'authenticate' | 'wire2'>,
    private readonly recheckMs = RECHECK_MS,
    private readonly onRevoked?: (closed: number) => void,
  ) {}

  /**
   * The peer (or v2 sender) a credential stands for now, null when it no longer does, undefined when the
   * store cannot answer. A v2 sender's credential is `wire2:<short id>` (its key, registered with a token
   * whose revocation cuts it too: docs/decisions/495-hop-v2-on-the-agent-link.md).
   */
  private lookup(credential: string): Promise<unknown> {
    const v2 = /^wire2:(\d+)$/.exec(credential);
    const found = v2
      ? (this.backend.wire2?.sender(Number(v2[1])) ?? Promise.resolve(null))
      : this.backend.authenticate(credential);
    return found.catch(() => undefined);
  }

  /** Keeps `close` to call when `token` stops authenticating; answers the function that lets it go. */
  hold(token: string, close: () => void): () => void {
    const set = this.open.get(token) ?? new Set();
    this.open.set(token, set);
    set.add(close);
    if (!this.timer) {
      this.timer = setInterval(() => void this.check(), this.recheckMs);
      this.timer.unref();
    }
    return () => {
      set.delete(close);
      if (set.size === 0 && this.open.get(token) === set) this.open.delete(token);
      if (this.open.size === 0) this.stop();
    };
  }

  /**
   * Whether `token` still authenticates (the last look before an answer goes out). A held request this
   * look refuses is closed by the revoke as surely as one the timer closes, so it is counted the same.
   */
  async live(token: string): Promise<boolean> {
    // a store that cannot answer refuses the page too (undefined), but revoked nothing
    const peer = await this.lookup(token);
    if (peer === null) this.onRevoked?.(1);
    return peer !== null && peer !== undefined;
  }

  /** Requests open now (all tokens). */
  get size(): number {
    let n = 0;
    for (const s of this.open.values()) n += s.size;
    return n;
  }

  /** Checks every open token once; closes the requests of those that no longer authenticate. */
  async check(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      for (const [token, set] of [...this.open]) {
        // a store that cannot answer now closes nothing: the next check asks again
        const peer = await this.lookup(token);
        if (peer !== null) continue;
        this.open.delete(token);
        const closers = [...set];
        for (const close of closers) close();
        this.onRevoked?.(closers.length);
      }
    } finally {
      this.checking = false;
      if (this.open.size === 0) this.stop();
    }
  }

  /** Stops checking (nothing open, or the server closes). */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
