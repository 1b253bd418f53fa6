import { WireError } from '@driftline/protocol';
import type { Context } from 'koa';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/** A 429 `too-many-requests` that says when to come back (`Retry-After`, RFC 9110 §10.2.3). */
export function tooMany(ctx: Context, retryAfterS: number, detail: string): WireError {
  ctx.set('Retry-After', String(retryAfterS));
  return new WireError('too-many-requests', detail);
}

/**
 * The people's side's rate limits (rate-limiter-flexible, in memory, fixed one-minute windows):
 * requests per credential (or per client address without one), and failed sign-ins per client address.
 */
export class RateLimits {
  private readonly requests: RateLimiterMemory;
  private readonly failures: RateLimiterMemory;

  constructor(
    private readonly perMinute: number,
    private readonly failuresPerMinute: number,
  ) {
    this.requests = new RateLimiterMemory({ keyPrefix: 'req', points: perMinute, duration: 60 });
    this.failures = new RateLimiterMemory({ keyPrefix: 'fail', points: failuresPerMinute, duration: 60 });
  }

  /** Counts one request of `key` (`u:<user>` or `a:<address>`); throws 429 past the limit. */
  async take(ctx: Context, key: string): Promise<void> {
    try {
      await this.requests.consume(key);
    } catch (e) {
      if (!(e instanceof RateLimiterRes)) throw e;
      throw tooMany(
        ctx,
        seconds(e.msBeforeNext),
        `more than ${this.perMinute} requests a minute from this credential`,
      );
    }
  }

  /** Seconds until `address` may try to sign in again, or null when it may now. */
  async signInBlocked(address: string): Promise<number | null> {
    const r = await this.failures.get(address);
    return r && r.consumedPoints >= this.failuresPerMinute ? seconds(r.msBeforeNext) : null;
  }

  /** Counts a failed sign-in from `address`; returns seconds to wait when that was one too many. */
  async failed(address: string): Promise<number | null> {
    try {
      await this.failures.consume(address);
      return null;
    } catch (e) {
      if (!(e instanceof RateLimiterRes)) throw e;
      return seconds(e.msBeforeNext);
    }
  }

  /** A message for the 429 of a blocked address. */
  blockedMessage(): string {
    return `more than ${this.failuresPerMinute} failed sign-ins a minute from this address; wait and check the token`;
  }
}
