import type { Socket } from 'node:net';
import type { LinkSettings } from '../../core/link/settings.js';
import { nextEventMs, type Random } from '../../core/rng.js';
import { DelayPipe, type DirectionCounters } from './DelayPipe.js';

export interface ConnectionEnv {
  settings: () => LinkSettings;
  now: () => number;
  random: Random;
  uplink: DirectionCounters;
  downlink: DirectionCounters;
  /** Called once when both sockets are closed. */
  onClosed: (c: ProxiedConnection) => void;
  onReset: (c: ProxiedConnection) => void;
}

/**
 * One client connection and its upstream, joined by a DelayPipe each way. Half-close is carried
 * through (FIN travels in order, after the data). Random resets and stalls follow the link's rates.
 */
export class ProxiedConnection {
  readonly up: DelayPipe;
  readonly down: DelayPipe;
  private resetTimer: NodeJS.Timeout | null = null;
  private readonly stallTimers: { uplink: NodeJS.Timeout | null; downlink: NodeJS.Timeout | null } = {
    uplink: null,
    downlink: null,
  };
  private done = false;

  constructor(
    readonly client: Socket,
    readonly upstream: Socket,
    private readonly env: ConnectionEnv,
  ) {
    const s = env.settings;
    const maxHeld = () => s().maxHeldBytes;
    this.up = new DelayPipe(client, upstream, () => s().uplink, maxHeld, env.now, env.random, env.uplink);
    this.down = new DelayPipe(
      upstream,
      client,
      () => s().downlink,
      maxHeld,
      env.now,
      env.random,
      env.downlink,
    );
    client.on('data', (b: Buffer) => this.up.push(b));
    upstream.on('data', (b: Buffer) => this.down.push(b));
    client.on('end', () => this.up.end());
    upstream.on('end', () => this.down.end());
    // An error on either side (a peer's RST, a refused upstream) ends the whole connection.
    client.on('error', () => this.cut());
    upstream.on('error', () => this.cut());
    // A clean close of one side (both FINs done) leaves the other side to finish delivering in order.
    let closedSockets = 0;
    const onClose = (hadError: boolean) => {
      closedSockets++;
      if (hadError) this.cut();
      if (closedSockets === 2) this.finish();
    };
    client.on('close', onClose);
    upstream.on('close', onClose);
    this.rearm();
  }

  /** (Re)schedules random resets and stalls from the current settings. */
  rearm(): void {
    if (this.done) return;
    const s = this.env.settings();
    if (this.resetTimer) clearTimeout(this.resetTimer);
    this.resetTimer = timer(nextEventMs(s.resetsPerMin, this.env.random), () => {
      this.env.onReset(this);
      this.cut();
    });
    for (const dir of ['uplink', 'downlink'] as const) {
      this.armStall(dir);
    }
  }

  private armStall(dir: 'uplink' | 'downlink'): void {
    const t = this.stallTimers[dir];
    if (t) clearTimeout(t);
    const d = this.env.settings()[dir];
    this.stallTimers[dir] = timer(nextEventMs(d.stallsPerMin, this.env.random), () => {
      (dir === 'uplink' ? this.up : this.down).stall(this.env.settings()[dir].stallMs);
      this.armStall(dir);
    });
  }

  /** Cuts both sides with a TCP reset; bytes still held are dropped (and counted). */
  cut(): void {
    if (this.done) return;
    this.up.close();
    this.down.close();
    this.stopTimers();
    for (const sock of [this.client, this.upstream]) {
      if (!sock.destroyed) {
        if (sock.readyState === 'open' || sock.readyState === 'readOnly' || sock.readyState === 'writeOnly') {
          sock.resetAndDestroy();
        } else sock.destroy();
      }
    }
  }

  private finish(): void {
    if (this.done) return;
    this.up.close();
    this.down.close();
    this.stopTimers();
    this.done = true;
    this.env.onClosed(this);
  }

  private stopTimers(): void {
    if (this.resetTimer) clearTimeout(this.resetTimer);
    for (const t of Object.values(this.stallTimers)) if (t) clearTimeout(t);
    this.resetTimer = null;
    this.stallTimers.uplink = null;
    this.stallTimers.downlink = null;
  }
}

function timer(ms: number, fn: () => void): NodeJS.Timeout | null {
  if (!Number.isFinite(ms)) return null;
  const t = setTimeout(fn, Math.min(Math.max(ms, 1), 2 ** 31 - 1));
  t.unref();
  return t;
}
