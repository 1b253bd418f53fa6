import { createHook } from 'node:async_hooks';

/**
 * Knows when the process has no real work under way: no file system request, no crypto job (WebCrypto
 * signs and digests run in libuv's pool), no DNS lookup. The world's clock advances only then
 * (docs/decisions/540-deterministic-world.md): a jump to the next timer while a signature is being made
 * would let the order of completions, not the seed, decide what happens.
 *
 * One-shot requests (`FSREQCALLBACK`, `FSREQPROMISE`, `SIGNREQUEST`, `HASHREQUEST`, …) are counted from
 * their creation to their callback; a crypto job run synchronously is not counted at all. Long-lived handles (sockets, zlib streams) are not tracked: the world
 * carries no socket, and its transport inflates bodies itself (WorldNetwork) so no zlib stream is left
 * working in the pool.
 */
export class IdleWatch {
  private readonly pending = new Map<number, { type: string; resource: object }>();
  private readonly hook = createHook({
    init: (id, type, _trigger, resource) => {
      if (ONE_SHOT.test(type)) this.pending.set(id, { type, resource });
    },
    after: (id) => {
      this.pending.delete(id);
    },
    destroy: (id) => {
      this.pending.delete(id);
    },
  });

  start(): void {
    this.hook.enable();
  }

  stop(): void {
    this.hook.disable();
    this.pending.clear();
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
