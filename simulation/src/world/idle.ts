import { createHook } from 'node:async_hooks';

/**
 * Knows when the process has no real work under way: no file system request, no crypto job (WebCrypto
 * signs and digests run in libuv's pool), no DNS lookup. The world's clock advances only then
 * (docs/decisions/540-deterministic-world.md): a jump to the next timer while a signature is being made
 * would let the order of completions, not the seed, decide what happens.
 *
 * One-shot requests (`FSREQCALLBACK`, `FSREQPROMISE`, `SIGNREQUEST`, `HASHREQUEST`, …) are counted from
 * their creation to their callback (`after`; promise-based file requests call back too); a crypto job run
 * synchronously is not counted at all. Long-lived handles (sockets, zlib streams) are not tracked: the world
 * carries no socket, and its transport inflates bodies itself (WorldNetwork) so no zlib stream is left
 * working in the pool.
 */
export class IdleWatch {
  private readonly pending = new Map<number, { type: string; resource: object }>();
  /** Who waits in {@link nextDone} (the world's settle; two, when a driven world is stepped too). */
  private readonly waiting = new Set<(calledBack: boolean) => void>();
  private readonly hook = createHook({
    init: (id, type, _trigger, resource) => {
      if (type !== 'PROMISE' && ONE_SHOT.test(type)) this.pending.set(id, { type, resource });
    },
    // No `destroy` hook: with one, Node tracks every promise's collection (a weak callback each), which
    // cost a world more than the rest of this watch. Every request counted here calls back (`after`); the
    // one kind that does not, a crypto job run synchronously, is recognised in `busy`.
    after: (id) => {
      if (this.pending.delete(id)) this.done();
    },
  });

  start(): void {
    this.hook.enable();
  }

  stop(): void {
    this.hook.disable();
    this.pending.clear();
  }

  /**
   * Whether a request counted here (a file, a crypto job) is under way: one that calls back, so
   * {@link nextDone} can wait for it.
   */
  requestsUnderway(): boolean {
    for (const [id, p] of this.pending) if (isSyncCryptoJob(p.resource)) this.pending.delete(id);
    return this.pending.size > 0;
  }

  /**
   * Resolves `true` when a request under way calls back, `false` after `backstopMs` of real time without one
   * (a request that never calls back: the caller counts these looks). `realTimer` is the machine's timer (the
   * world's clock has replaced `setTimeout`). The process waits in the kernel meanwhile: on one
   * thread of libuv's pool, a main thread that turned the event loop while it waited took the core the
   * request needed.
   */
  nextDone(backstopMs: number, realTimer: (fn: () => void, ms: number) => () => void): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const wake = (calledBack: boolean) => {
        this.waiting.delete(wake);
        cancel();
        resolve(calledBack);
      };
      const cancel = realTimer(() => wake(false), backstopMs);
      this.waiting.add(wake);
    });
  }

  private done(): void {
    for (const wake of [...this.waiting]) wake(true);
  }

  /** The kinds of work under way now (empty: idle as far as real work goes). */
  busy(): string[] {
    const fs = process.getActiveResourcesInfo().filter((t) => FS_ACTIVE.test(t));
    const under: string[] = [];
    for (const [id, p] of this.pending) {
      if (isSyncCryptoJob(p.resource)) this.pending.delete(id);
      else under.push(p.type);
    }
    return [...under, ...fs];
  }
}

/**
 * A crypto job (`SIGNREQUEST`, `RANDOMBYTESREQUEST`, …) run synchronously: `crypto.sign`, `randomUUID`'s
 * refill, `generateKeyPairSync`. It is made, run and over within the call that made it, and never calls
 * back, so no `after` comes for it, only a `destroy` at the next garbage collection; until then it looked
 * like work under way. An asynchronous one has its `ondone` set by the call that made it, before anything
 * can ask (Node's lib/internal/crypto: `job.ondone = …; job.run()`).
 */
function isSyncCryptoJob(resource: object): boolean {
  const job = resource as { run?: unknown; ondone?: unknown };
  return typeof job.run === 'function' && job.ondone === undefined;
}

const ONE_SHOT = /REQ(UEST|WRAP)?$|^FSREQ/;
/**
 * What `process.getActiveResourcesInfo()` names for a file system request in flight, and for a child
 * process not yet gone (a node's `git`): the world waits for it, as for any real work, before time moves.
 */
const FS_ACTIVE = /^FSReq|^FileHandleCloseReq$|^ProcessWrap$/;
