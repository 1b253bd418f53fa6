import { createHook } from 'node:async_hooks';

/**
 * Knows when the process has no real work under way: no file system request, no crypto job (WebCrypto
 * signs and digests run in libuv's pool), no DNS lookup. The world's clock advances only then
 * (docs/decisions/540-deterministic-world.md): a jump to the next timer while a signature is being made
 * would let the order of completions, not the seed, decide what happens.
 *
 * One-shot requests (`FSREQCALLBACK`, `FSREQPROMISE`, `SIGNREQUEST`, `HASHREQUEST`, …) are counted from
 * their creation to their callback. Long-lived handles (sockets, zlib streams) are not tracked: the world
 * carries no socket, and its transport inflates bodies itself (WorldNetwork) so no zlib stream is left
 * working in the pool.
 */
export class IdleWatch {
  private readonly pending = new Map<number, string>();
  private readonly hook = createHook({
    init: (id, type) => {
      if (ONE_SHOT.test(type)) this.pending.set(id, type);
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
    return [...this.pending.values(), ...fs];
  }
}

const ONE_SHOT = /REQ(UEST|WRAP)?$|^FSREQ/;
/**
 * What `process.getActiveResourcesInfo()` names for a file system request in flight, and for a child
 * process not yet gone (a node's `git`): the world waits for it, as for any real work, before time moves.
 */
const FS_ACTIVE = /^FSReq|^FileHandleCloseReq$|^ProcessWrap$/;
