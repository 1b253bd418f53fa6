import {
  compareDecimalCursors,
  type DownlinkQuery,
  formatHeld,
  HELD_HEADER,
  HOLDER_HEADER,
  HOLDER_PATTERN,
  LEGACY_MAX_STATED_S,
  LONG_HOLDS_HEADER,
  WireError,
} from '@driftline/protocol';
import type { Context } from 'koa';
import type { HopBackend, Peer } from '../ports/HopBackend.js';
import { bearerToken } from './auth.js';
import type { Holder, WaitEnd } from './downlinkWaiters.js';
import type { OpenCredentials } from './openCredentials.js';

/** Longest hold of a node that holds pulls but states no longest of its own (the query's old bound). */
export const LEGACY_MAX_HOLD_S = 60;

type Page = { bundles: Uint8Array[]; cursor: string };

/**
 * A pull that asked to wait (`wait`), on a node that holds pulls: held while the site has nothing for
 * it, so control reaches it as soon as it arrives here (docs/decisions/270-control-first.md). `wait=0`
 * only asks whether this node holds pulls (the header says so, with its longest hold, decision 320).
 * A pull naming its holder (`driftline-holder`) is one of up to `keepHeld` of that holder; one that would
 * find only what that holder's last answer carried is held as if it found nothing, and answered empty
 * then (docs/decisions/340-no-gap-between-held-pulls.md). Holds may last a day; a client that may not
 * read so long a longest is told an hour (docs/decisions/390-long-holds.md). Answers the page to send;
 * `quiet` when a newer pull of the holder took this one's place (nothing else goes with it). With
 * `credentials`, a pull whose token is revoked while it is held is let go at once and answered 401, and
 * the token is checked once more before any page goes out (docs/decisions/411-revocation-cuts-at-once.md).
 */
export async function holdPull(
  backend: HopBackend,
  peer: Peer,
  q: DownlinkQuery & { wait: number },
  ctx: Context,
  first: Page,
  credentials?: OpenCredentials,
): Promise<Page & { quiet: boolean }> {
  const maxS = backend.maxHoldS ?? LEGACY_MAX_HOLD_S;
  const waitS = Math.min(q.wait, maxS);
  // A client before decision 390 takes a longest over an hour for garbage (and falls back to 55 s pulls):
  // it is told the hour; one that asks more, or says it reads more, the real longest.
  const readsLong = q.wait > LEGACY_MAX_STATED_S || ctx.get(LONG_HOLDS_HEADER) === '1';
  const statedS = readsLong ? maxS : Math.min(maxS, LEGACY_MAX_STATED_S);
  ctx.set(HELD_HEADER, formatHeld(waitS, statedS, backend.keepHeld));
  const name = ctx.get(HOLDER_HEADER);
  const holder =
    backend.keepHeld && backend.held && HOLDER_PATTERN.test(name) ? `${peer.name}\n${name}` : undefined;
  const last = lastAnswer(backend, q.for, holder);
  const after = q.after ?? '0';
  let page = first;
  let quiet = false;
  const repeat = last.repeats(page);
  if (waitS > 0 && backend.waitForDownlink && (page.bundles.length === 0 || repeat)) {
    if (repeat) last.heldRepeat();
    const token = bearerToken(ctx.get('authorization'));
    const by = holder ? { peer: holder } : undefined;
    const held = await waitHeld(
      backend,
      ctx,
      q.for,
      waitS * 1000,
      by,
      token ? credentials : undefined,
      token,
    );
    if (held.revoked)
      throw new WireError('unauthorized', 'the bearer token was revoked while this pull was held');
    const { end, gone } = held;
    quiet = end === 'superseded';
    page = quiet || gone ? { bundles: [], cursor: after } : await backend.downlink(peer, q);
    if (last.repeats(page)) page = { bundles: [], cursor: after };
    // revoked while it was held, between two checks: nothing goes to it
    if (credentials && token && page.bundles.length > 0 && !(await credentials.live(token)))
      throw new WireError('unauthorized', 'the bearer token was revoked while this pull was held');
  }
  last.answered(page);
  return { ...page, quiet };
}

/**
 * A holder's last answer at this node (decision 340), for v1's held pulls and v2's alike: `repeats` says a
 * page carries only what that answer carried (a pull sent before the answer reached its agent, which is
 * then held as if it found nothing), `heldRepeat` counts one held so, `answered` notes a page sent. With no
 * holder, or a node that keeps one held pull per holder, nothing is kept and nothing repeats.
 */
export function lastAnswer(backend: HopBackend, site: string, holder: string | undefined) {
  const memory = holder !== undefined && backend.keepHeld ? backend.held : undefined;
  return {
    repeats(p: Page): boolean {
      const upTo = holder !== undefined ? memory?.answeredUpTo(site, holder) : undefined;
      return p.bundles.length > 0 && upTo !== undefined && (compareDecimalCursors(p.cursor, upTo) ?? 1) <= 0;
    },
    heldRepeat(): void {
      if (holder !== undefined) memory?.heldRepeat(site, holder);
    },
    answered(p: Page): void {
      if (holder !== undefined && p.bundles.length > 0) memory?.noteAnswered(site, holder, p.cursor);
    },
  };
}

/**
 * Holds a request open until downlink for `site` may have arrived, `ms` passed, or the request went away
 * (`gone`); with `credentials`, until `credential` stops authenticating too (`revoked`: a revoke cuts a held
 * pull at once, decision 411). Shared by v1's held pulls and hop v2's (decision 495).
 */
export async function waitHeld(
  backend: HopBackend,
  ctx: Context,
  site: string,
  ms: number,
  holder: Holder | undefined,
  credentials: OpenCredentials | undefined,
  credential: string | null,
): Promise<{ end: WaitEnd | undefined; gone: boolean; revoked: boolean }> {
  const held = await holdOpen(ctx, credentials, credential, (signal) =>
    backend.waitForDownlink ? backend.waitForDownlink(site, ms, signal, holder) : Promise.resolve(undefined),
  );
  return { end: held.value, gone: held.gone, revoked: held.revoked };
}

/**
 * Runs `wait` with a signal that aborts when the request goes away (`gone`) or, with `credentials`, when
 * `credential` stops authenticating (`revoked`, decision 411): what every held request of the hop API
 * (pulls of both wires, the downlink watch of decision 620) is held under.
 */
export async function holdOpen<T>(
  ctx: Context,
  credentials: OpenCredentials | undefined,
  credential: string | null,
  wait: (signal: AbortSignal) => Promise<T>,
): Promise<{ value: T; gone: boolean; revoked: boolean }> {
  const gone = new AbortController();
  const onClose = () => gone.abort();
  ctx.req.once('close', onClose);
  let revoked = false;
  const release =
    credentials && credential
      ? credentials.hold(credential, () => {
          revoked = true;
          gone.abort();
        })
      : () => {};
  try {
    const value = await wait(gone.signal);
    return { value, gone: gone.signal.aborted, revoked };
  } finally {
    ctx.req.off('close', onClose);
    release();
  }
}
