import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { seededRandom } from '../core/rng.js';
import type { Invariant } from './invariant.js';
import { RELAY, type World } from './World.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
/** With `disk`: the relay's blob folder is lost, and its disk fills, each on average once in this long, ms. */
export const DISK_EVERY_MS = 24 * HOUR;
/** A full disk stays full 10 minutes to 3 hours. */
const FULL_MS = { min: 10 * MIN, max: 3 * HOUR };
/**
 * The relay's `storage.maxBytes` in a world with `disk` (none without): what a full disk fills. Far above what
 * a world's relay keeps, so only the fault fills it.
 */
export const RELAY_MAX_BYTES = 256 * 1024 * 1024;

type Backend = World['relay']['backend'];
const SHA256 = /^[0-9a-f]{64}$/;

/** One full-disk episode at the relay, and what the relay did in it and after. */
interface Full {
  from: number;
  to: number;
  /** Writes refused as `storage-full` (507) while it lasted. */
  refused: number;
  /** When the relay first took a bundle or blob into custody after it ended; null: never. */
  tookAgainAt: number | null;
}

/** One loss of the relay's blob folder: when, and the blobs (sha256) in it then. */
interface Loss {
  at: number;
  blobs: string[];
}

/**
 * The `disk` fault (docs/decisions/540-deterministic-world.md), at the relay, drawn from `${seed}:disk`:
 *
 * - **a blob folder lost**: at a drawn instant the fault is armed, and the next time the relay takes a
 *   detail blob into custody (an upload finished) its `blobs/` folder is deleted while it runs, the blob in
 *   it (relay/test/disk*.test.ts, simulation/test/hostile/blobDirDeleted.world.test.ts: the relay drops a blob
 *   gone from disk, counted as `blobs_lost`, and the agent uploads it again without a hub receipt);
 * - **a disk full for a while**: the relay runs with `storage.maxBytes` ({@link RELAY_MAX_BYTES}) and for
 *   10 minutes to 3 hours bytes outside custody fill it (`Custody.externalBytes`, the port's count of bytes
 *   kept outside the store that count against the cap): SQLite may not grow (SQLITE_FULL, as on a real full
 *   disk) and writes are refused with 507 `insufficient-storage`.
 *
 * The agents keep their detail blobs in their SQLite file, not a folder, so the agent has no blob folder to
 * lose; a full disk at an agent is not modelled (the agent has no free-space port: its SQLite would answer
 * SQLITE_FULL).
 */
export class DiskFaults {
  readonly losses: Loss[] = [];
  readonly fulls: Full[] = [];
  /** Losses armed that found no blob to take before the world ended. */
  armed = 0;
  private watched: Backend | null = null;
  private fullNow: Full | null = null;
  private lossArmed = false;
  /** Ends the full disk now (its timer's work), while one is full. */
  private free: (() => void) | null = null;
  /** Blobs of a lost folder not (yet) at the hub. */
  private readonly missing = new Set<string>();
  /** Uploads the relay finished after its folder was first lost (it took blobs again). */
  uploadsAfterLoss = 0;

  constructor(private readonly world: World) {}

  /** The fault's schedule, drawn from the seed before the days begin: world timers. */
  schedule(seed: number, daysMs: number): void {
    const random = seededRandom(`${seed}:disk`);
    const gap = () => Math.ceil(-Math.log(1 - random()) * DISK_EVERY_MS);
    // each at least once a run (the first at a uniform instant of the days), then about once a day
    const first = () => Math.floor(random() * daysMs);
    for (let at = first(); at < daysMs; at += gap()) setTimeout(() => this.arm(), at);
    for (let at = first(); at < daysMs; ) {
      const length = Math.round(FULL_MS.min + random() * (FULL_MS.max - FULL_MS.min));
      setTimeout(() => this.fill(length), at);
      at += length + gap();
    }
  }

  /** Arms a loss: the relay's blob folder goes the next time it takes a blob. */
  arm(): void {
    this.armed++;
    this.lossArmed = true;
    this.watch();
  }

  /**
   * The days are over: a loss armed and not yet come does not come, and a full disk is freed. A loss during the drains after the disk's
   * own would have no time to recover in (seed 4 of `links,crash,disk,hostile` lost a folder in the hostile
   * drain, after the disk's).
   */
  disarm(): void {
    this.lossArmed = false;
    // and a disk still full is freed now: its end drawn past the days would fall after the drains
    // (seed 19 of `links,crash,disk,hostile`: full from the last hours of the day on, "took nothing in after")
    this.free?.();
  }

  /** The relay's disk is full for `ms`: every byte under its cap taken by something else. */
  fill(ms: number): void {
    const relay = this.world.relay;
    if (!relay || this.fullNow) return;
    this.watch();
    const custody = relay.custody;
    const outside = custody.externalBytes;
    const full: Full = { from: Date.now(), to: Date.now() + ms, refused: 0, tookAgainAt: null };
    this.fulls.push(full);
    this.fullNow = full;
    custody.externalBytes = () => outside() + RELAY_MAX_BYTES;
    const timer = setTimeout(() => this.free?.(), ms);
    this.free = () => {
      clearTimeout(timer);
      this.free = null;
      custody.externalBytes = outside;
      this.fullNow = null;
      full.to = Date.now();
      this.watch();
    };
  }

  /** Wraps the relay's backend (each life of it) to see what it takes in and refuses. */
  private watch(): void {
    const backend = this.world.relay?.backend;
    if (!backend || backend === this.watched) return;
    this.watched = backend;
    const onRefused = backend.onRefused;
    backend.onRefused = (peer, reason, n) => {
      if (reason === 'storage-full' && this.fullNow) this.fullNow.refused += n;
      onRefused(peer, reason, n);
    };
    const onWork = backend.onWork;
    backend.onWork = () => {
      // a blob just taken (a finished upload records it, then wakes the forwarder): the folder goes with it
      // before the forwarder opens it (an open file would stay readable)
      if (this.lossArmed && this.holdsBlobs()) this.lose();
      const now = Date.now();
      for (const f of this.fulls) if (f !== this.fullNow && f.tookAgainAt === null) f.tookAgainAt = now;
      onWork();
    };
    const uploadFinished = backend.uploadFinished.bind(backend);
    backend.uploadFinished = async (peer, upload) => {
      const after = this.losses.length > 0;
      await uploadFinished(peer, upload);
      if (after) this.uploadsAfterLoss++;
    };
  }

  private get blobDir(): string {
    return join(this.world.root, RELAY, 'blobs');
  }

  private holdsBlobs(): boolean {
    return existsSync(this.blobDir) && readdirSync(this.blobDir).some((f) => SHA256.test(f));
  }

  /** Deletes the relay's blob folder as it runs (an operator's `rm -rf`, a lost volume). */
  private lose(): void {
    const dir = this.blobDir;
    const blobs = existsSync(dir) ? readdirSync(dir).filter((f) => SHA256.test(f)) : [];
    rmSync(dir, { recursive: true, force: true });
    this.lossArmed = false;
    this.armed--;
    this.losses.push({ at: Date.now(), blobs });
    for (const b of blobs) this.missing.add(b);
  }

  /**
   * Runs the world until every blob of a lost folder is at the hub (the agent uploads it again once it has
   * waited `sync.resendAfterS` for a hub receipt), at most `withinMs`; whether they all came.
   */
  async drain(withinMs: number): Promise<boolean> {
    const end = Date.now() + withinMs;
    for (;;) {
      for (const sha of [...this.missing])
        if (await this.world.hub.store.getBlob(sha).catch(() => null)) this.missing.delete(sha);
      if (this.missing.size === 0) return true;
      if (Date.now() >= end) return false;
      await this.world.run(10 * MIN);
    }
  }

  /** Blobs of a lost folder not at the hub. */
  get stillMissing(): string[] {
    return [...this.missing];
  }

  /** The relay's own count of blobs it found gone from disk (kept in its store, across restarts). */
  blobsLostAtRelay(): number {
    return this.world.relay.custody.counter('blobs_lost');
  }
}

/** What the `disk` fault's runs must show: each loss and each full disk happened and the relay recovered. */
export function diskInvariants(d: DiskFaults, drained: boolean): Invariant[] {
  const blobs = d.losses.reduce((n, l) => n + l.blobs.length, 0);
  const missing = d.stillMissing;
  const refused = d.fulls.reduce((n, f) => n + f.refused, 0);
  const stuck = d.fulls.filter((f) => f.tookAgainAt === null);
  const slowest = Math.max(0, ...d.fulls.map((f) => (f.tookAgainAt ?? f.to) - f.to));
  return [
    {
      name: "the relay's lost blob folder recovered",
      // armed, and no detail blob came to the relay after: nothing was lost, nothing to recover (said so)
      held: drained && missing.length === 0,
      detail:
        d.losses.length === 0
          ? `not lost: armed ${d.armed} time(s), and no detail blob came to the relay after`
          : missing.length > 0 || !drained
            ? `${missing.length} of ${blobs} blobs of the lost folder never reached the hub: ${missing.slice(0, 3).join(', ')}`
            : `${d.losses.length} lost with ${blobs} blobs in it (${d.blobsLostAtRelay()} found gone by the relay and dropped), every one at the hub; ${d.uploadsAfterLoss} uploads taken into a new folder after`,
    },
    {
      name: "the relay's full disk recovered",
      held: d.fulls.length > 0 && stuck.length === 0,
      detail:
        d.fulls.length === 0
          ? 'no full disk happened'
          : stuck.length > 0
            ? `${stuck.length} of ${d.fulls.length} full disks: the relay took nothing in after the disk was freed`
            : `${d.fulls.length} full for ${d.fulls.map((f) => `${Math.round((f.to - f.from) / MIN)} min`).join(', ')}: ${refused} writes refused 507 while full, custody taken again within ${Math.round(slowest / MIN)} min of each end`,
    },
  ];
}
