import type { Socket } from 'node:net';
import { type PaceState, paceChunk, START_PACE } from '../../core/link/pacing.js';
import type { DirectionSettings } from '../../core/link/settings.js';
import type { Random } from '../../core/rng.js';

/** Counters of one direction, shared by every connection of a link. */
export interface DirectionCounters {
  bytes: number;
  chunks: number;
  droppedBytes: number;
  stalls: number;
  heldBytes: number;
  maxHeldBytes: number;
}

export const newCounters = (): DirectionCounters => ({
  bytes: 0,
  chunks: 0,
  droppedBytes: 0,
  stalls: 0,
  heldBytes: 0,
  maxHeldBytes: 0,
});

interface Pending {
  at: number;
  chunk: Buffer | null; // null: the source ended (FIN), end the destination in order
}

/** Bigger chunks are split so bandwidth pacing releases bytes smoothly, not in 64 KiB lumps. */
const SEGMENT = 16 * 1024;

/**
 * One direction of one proxied connection: holds each chunk until its arrival time (bandwidth, delay,
 * jitter), releases in order, stops reading from the source past `maxHeldBytes` so memory stays
 * bounded under a large delay × bandwidth, and respects the destination's own backpressure.
 */
export class DelayPipe {
  private queue: Pending[] = [];
  private head = 0;
  private held = 0;
  private pace: PaceState = START_PACE;
  private timer: NodeJS.Timeout | null = null;
  private stalledUntil = 0;
  private waitingDrain = false;
  private pausedSource = false;
  private closed = false;

  constructor(
    private readonly src: Socket,
    private readonly dst: Socket,
    private readonly settings: () => DirectionSettings,
    private readonly maxHeld: () => number,
    private readonly now: () => number,
    private readonly random: Random,
    private readonly counters: DirectionCounters,
  ) {}

  push(data: Buffer): void {
    if (this.closed) return;
    for (let off = 0; off < data.length; off += SEGMENT) {
      const chunk = data.subarray(off, Math.min(off + SEGMENT, data.length));
      const r = paceChunk(this.pace, chunk.length, this.now(), this.settings(), this.random);
      this.pace = r.state;
      this.queue.push({ at: r.arrival, chunk });
      this.hold(chunk.length);
    }
    if (this.held > this.maxHeld() && !this.pausedSource) {
      this.pausedSource = true;
      this.src.pause();
    }
    this.pump();
  }

  /** The source sent FIN: end the destination once everything before it has arrived. */
  end(): void {
    if (this.closed) return;
    const d = this.settings();
    const at = Math.max(this.pace.lastArrival, this.now() + d.delayMs);
    this.queue.push({ at, chunk: null });
    this.pump();
  }

  /** Nothing is released for `ms` (a stall); what is due is released in one burst afterwards. */
  stall(ms: number): void {
    this.counters.stalls++;
    this.stalledUntil = Math.max(this.stalledUntil, this.now() + ms);
    this.pump();
  }

  /** The connection is gone: what was still held is lost and counted. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.counters.droppedBytes += this.held;
    this.hold(-this.held);
    this.queue = [];
  }

  private hold(delta: number): void {
    this.held += delta;
    this.counters.heldBytes += delta;
    if (this.counters.heldBytes > this.counters.maxHeldBytes)
      this.counters.maxHeldBytes = this.counters.heldBytes;
  }

  private pump(): void {
    if (this.closed) return;
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    const now = this.now();
    while (this.head < this.queue.length && !this.waitingDrain && now >= this.stalledUntil) {
      const p = this.queue[this.head]!;
      if (p.at > now) break;
      this.head++;
      if (p.chunk === null) {
        this.dst.end();
        continue;
      }
      this.hold(-p.chunk.length);
      this.counters.bytes += p.chunk.length;
      this.counters.chunks++;
      if (!this.dst.write(p.chunk)) {
        this.waitingDrain = true;
        this.dst.once('drain', () => {
          this.waitingDrain = false;
          this.pump();
        });
      }
    }
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    if (this.pausedSource && this.held <= this.maxHeld() / 2) {
      this.pausedSource = false;
      this.src.resume();
    }
    if (this.head < this.queue.length && !this.waitingDrain) {
      const due = Math.max(this.queue[this.head]!.at, this.stalledUntil);
      // setTimeout caps at 2^31-1 ms (~24.8 days); a longer hold simply re-arms.
      this.timer = setTimeout(() => this.pump(), Math.min(Math.max(Math.ceil(due - now), 0), 2 ** 31 - 1));
    }
  }
}
