import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HOP_ROUTES } from '@driftline/hop';
import { seededRandom } from '../core/rng.js';
import type { Invariant } from './invariant.js';
import { RELAY, type World } from './World.js';
import { WorldLink } from './WorldLink.js';
import { type Dispatch, worldUrl } from './WorldNetwork.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
/** With `creds`: a site's token is stolen and rotated on average once in this long, ms (the first at a drawn instant). */
export const CREDS_EVERY_MS = 24 * HOUR;
/** The new token reaches the site's token file 10 minutes to 3 hours after the old one is revoked. */
const CARRY_MS = { min: 10 * MIN, max: 3 * HOUR };
/** The thief tries each stolen token this often until the days end. */
const THIEF_EVERY_MS = 15 * MIN;
/** A relay that is down when a rotation falls due: the operator tries again this much later. */
const RETRY_MS = 10 * MIN;
export const THIEF = 'thief';
/** Routes any caller may use, token or not (hop's `open` role: `GET /v1/health`): nothing of a site's is served there. */
const OPEN = new Set(HOP_ROUTES.filter((r) => r.role === 'open').map((r) => `${r.method} ${r.path}`));

/** One rotation: the site, when its token was revoked and when the new one was in its file (null: not yet). */
export interface Rotation {
  site: string;
  revokedAt: number;
  carriedAt: number | null;
}

/**
 * The `creds` fault (docs/decisions/540-deterministic-world.md, "Credentials"): about once a day a site's
 * token at relay-1 is stolen, and the operator does what docs/operations.md says: `relay token revoke`,
 * then `relay token add` and the new token carried to the agent's `tokenFile` 10 min–3 h later (the agent
 * reads it at its next request). A thief on its own link to relay-1 keeps using every stolen token every
 * 15 minutes (a pull of the site's downlink) until the days end.
 *
 * It judges every answer relay-1 itself gives (inside any hostile hop in front, so a lie is not counted as
 * the relay's): a bearer token revoked before the request arrived must not be answered below 400 (a 304 took it too), and a
 * request held from before the revocation must not be answered so later than the relay's look at held pulls
 * (`checkMs`, decision 411). Hop v2 messages carry no token: their key's registration goes with it
 * (`relay token revoke`), proven in `revokeHeldPull.world.test.ts` and `wire2*.world.test.ts`.
 */
export class CredentialFaults {
  readonly rotations: Rotation[] = [];
  /** Answers to revoked tokens: refused as they must be, or served (each a broken invariant, in `served`). */
  refused = 0;
  readonly served: string[] = [];
  thiefTries = 0;
  /** Revoked token → when. */
  private readonly revoked = new Map<string, number>();
  private daysEnd = 0;

  constructor(
    private readonly world: World,
    private readonly checkMs: number,
  ) {}

  /** What stands in front of relay-1's own listener: sees every answer it gives, and when. */
  front(relay: Dispatch): Dispatch {
    return (req, res) => {
      const token = bearer(req.headers.authorization);
      const revokedAt = token ? this.revoked.get(token) : undefined;
      const what = `${req.method} ${(req.url ?? '').split('?')[0]}`;
      if (revokedAt !== undefined && !OPEN.has(what)) {
        const arrivedAt = Date.now();
        res.once('finish', () => this.judge(what, res.statusCode, revokedAt, arrivedAt, Date.now()));
      }
      relay(req, res);
    };
  }

  /** The fault's schedule, drawn from `${seed}:creds` before the days begin: world timers. */
  schedule(seed: number, sites: readonly string[], daysMs: number): void {
    const random = seededRandom(`${seed}:creds`);
    this.daysEnd = Date.now() + daysMs;
    this.world.net.connect(
      THIEF,
      RELAY,
      new WorldLink(`${THIEF}>${RELAY}`, { uplink: { delayMs: 50 }, downlink: { delayMs: 50 } }, Date.now()),
    );
    const gap = () => Math.ceil(-Math.log(1 - random()) * CREDS_EVERY_MS);
    for (let at = Math.floor(random() * daysMs); at < daysMs; at += gap()) {
      const site = sites[Math.floor(random() * sites.length)] ?? sites[0];
      const carryMs = Math.round(CARRY_MS.min + random() * (CARRY_MS.max - CARRY_MS.min));
      if (site) setTimeout(() => this.rotate(site, carryMs), at);
    }
  }

  /** `relay token revoke SITE`, the old token kept by the thief; the new one carried `carryMs` later. */
  private rotate(site: string, carryMs: number): void {
    if (!this.relayUp()) {
      setTimeout(() => this.rotate(site, carryMs), RETRY_MS);
      return;
    }
    const file = join(this.world.root, site, 'agent.token');
    const stolen = readToken(file);
    const rotation: Rotation = { site, revokedAt: Date.now(), carriedAt: null };
    this.world.relay.tokens.revoke(site);
    this.revoked.set(stolen, rotation.revokedAt);
    this.rotations.push(rotation);
    this.steal(site, stolen);
    setTimeout(() => this.carry(rotation, file), carryMs);
  }

  /** `relay token add SITE` and the token written over the agent's token file (as a whole: renamed in). */
  private carry(rotation: Rotation, file: string): void {
    if (!this.relayUp()) {
      setTimeout(() => this.carry(rotation, file), RETRY_MS);
      return;
    }
    const fresh = this.world.relay.tokens.add(rotation.site, [rotation.site]);
    writeFileSync(`${file}.new`, `${fresh}\n`);
    renameSync(`${file}.new`, file);
    rotation.carriedAt = Date.now();
  }

  /** The thief pulls the site's downlink with the stolen token every {@link THIEF_EVERY_MS} until the days end. */
  private steal(site: string, token: string): void {
    const transport = this.world.net.transport(THIEF);
    const tryOnce = () => {
      if (Date.now() >= this.daysEnd) return;
      this.thiefTries++;
      transport
        .request(`${worldUrl(RELAY)}/v1/bundles?for=${encodeURIComponent(site)}&after=0`, {
          method: 'GET',
          headers: { authorization: `Bearer ${token}`, accept: 'application/octet-stream' },
        })
        .then((r) => r.arrayBuffer())
        .catch(() => undefined);
      setTimeout(tryOnce, THIEF_EVERY_MS);
    };
    setTimeout(tryOnce, 1000);
  }

  private judge(what: string, status: number, revokedAt: number, arrivedAt: number, answeredAt: number) {
    // a 304 ("nothing new") took the token as well as a 200 did
    if (status >= 400) {
      this.refused++;
      return;
    }
    if (arrivedAt >= revokedAt)
      this.served.push(
        `${what} answered ${status} at +${arrivedAt - revokedAt} ms after its token's revocation`,
      );
    else if (answeredAt > revokedAt + this.checkMs)
      this.served.push(
        `${what} held from before its token's revocation answered ${status} ${answeredAt - revokedAt} ms after it`,
      );
  }

  private relayUp(): boolean {
    return !this.world.isDown(RELAY);
  }

  invariants(): Invariant[] {
    const carried = this.rotations.filter((r) => r.carriedAt !== null).length;
    return [
      {
        name: 'nothing served to a revoked credential',
        held: this.served.length === 0 && this.rotations.length > 0 && this.refused > 0,
        detail:
          this.served.length === 0
            ? `${this.rotations.length} tokens revoked (${carried} replaced at their site), ${this.refused} requests with them refused (${this.thiefTries} by the thief), none served`
            : `${this.served.length} answered to a revoked token: ${this.served.slice(0, 3).join('; ')}`,
      },
    ];
  }
}

function bearer(h: string | string[] | undefined): string | null {
  const v = Array.isArray(h) ? h[0] : h;
  const m = v?.match(/^Bearer (\S+)$/);
  return m?.[1] ?? null;
}

function readToken(file: string): string {
  return readFileSync(file, 'utf8').trim();
}
