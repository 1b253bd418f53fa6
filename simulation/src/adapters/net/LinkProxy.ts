import { connect, createServer, type Server, type Socket } from 'node:net';
import { msUntilChange, scheduledUp } from '../../core/link/schedule.js';
import type { LinkSettings } from '../../core/link/settings.js';
import type { Random } from '../../core/rng.js';
import type { Logger } from '../../ports/Logger.js';
import { type DirectionCounters, newCounters } from './DelayPipe.js';
import { ProxiedConnection } from './ProxiedConnection.js';

export type ForcedState = 'up' | 'down' | null;

export interface LinkStats {
  name: string;
  up: boolean;
  forced: ForcedState;
  /** Milliseconds until the schedule changes state (null: never, or forced). */
  msUntilChange: number | null;
  uptimeMs: number;
  transitions: number;
  connections: {
    total: number;
    open: number;
    hung: number;
    /** Connections the link reset at random (`resetsPerMin`). */
    resets: number;
    /** Open connections cut because the link went down. */
    cut: number;
    /** Connections accepted while down and reset (refuse mode race, or too many hung). */
    refused: number;
  };
  uplink: DirectionCounters;
  downlink: DirectionCounters;
}

export interface LinkProxyOptions {
  name: string;
  listenHost: string;
  listenPort: number;
  targetHost: string;
  targetPort: number;
  settings: LinkSettings;
  now: () => number;
  random: Random;
  logger: Logger;
}

/**
 * A user-space TCP proxy that behaves like one emulated link (decision 030): it delays, caps and
 * disturbs bytes through ProxiedConnection/DelayPipe and follows the up/down schedule here.
 */
export class LinkProxy {
  private settingsNow: LinkSettings;
  private forced: ForcedState = null;
  private server: Server | null = null;
  private port = 0;
  private readonly startedAt: number;
  private readonly conns = new Set<ProxiedConnection>();
  private readonly hung = new Set<Socket>();
  private isUp = true;
  private stateTimer: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly counts = { total: 0, resets: 0, cut: 0, refused: 0, transitions: 0 };
  private readonly uplink = newCounters();
  private readonly downlink = newCounters();

  constructor(private readonly o: LinkProxyOptions) {
    this.settingsNow = o.settings;
    this.startedAt = o.now();
  }

  /** Starts listening (even when the schedule says down, so the port is known) and returns the port. */
  async start(): Promise<number> {
    await this.listen(this.o.listenPort);
    this.isUp = true;
    this.evaluate();
    return this.port;
  }

  get settings(): LinkSettings {
    return this.settingsNow;
  }

  setSettings(s: LinkSettings): void {
    this.settingsNow = s;
    for (const c of this.conns) c.rearm();
    this.evaluate();
  }

  force(state: ForcedState): void {
    this.forced = state;
    this.evaluate();
  }

  stats(): LinkStats {
    const elapsed = this.o.now() - this.startedAt;
    const until = this.forced ? Number.POSITIVE_INFINITY : msUntilChange(this.settingsNow.schedule, elapsed);
    return {
      name: this.o.name,
      up: this.isUp,
      forced: this.forced,
      msUntilChange: Number.isFinite(until) ? Math.round(until) : null,
      uptimeMs: Math.round(elapsed),
      transitions: this.counts.transitions,
      connections: {
        total: this.counts.total,
        open: this.conns.size,
        hung: this.hung.size,
        resets: this.counts.resets,
        cut: this.counts.cut,
        refused: this.counts.refused,
      },
      uplink: { ...this.uplink },
      downlink: { ...this.downlink },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.stateTimer) clearTimeout(this.stateTimer);
    for (const c of this.conns) c.cut();
    for (const s of this.hung) s.destroy();
    this.hung.clear();
    await this.unlisten();
  }

  /** Applies the state the schedule (or a forced state) asks for now, and arms the next change. */
  private evaluate(): void {
    if (this.closed) return;
    if (this.stateTimer) clearTimeout(this.stateTimer);
    const elapsed = this.o.now() - this.startedAt;
    const want = this.forced ? this.forced === 'up' : scheduledUp(this.settingsNow.schedule, elapsed);
    if (want !== this.isUp) {
      this.isUp = want;
      this.counts.transitions++;
      this.o.logger.info({ link: this.o.name, up: want }, want ? 'link up' : 'link down');
      if (want) this.goUp();
      else this.goDown();
    } else if (!want) this.applyDownMode();
    const until = this.forced ? Number.POSITIVE_INFINITY : msUntilChange(this.settingsNow.schedule, elapsed);
    if (Number.isFinite(until)) {
      this.stateTimer = setTimeout(
        () => this.evaluate(),
        Math.min(Math.max(Math.ceil(until), 1), 2 ** 31 - 1),
      );
    }
  }

  private goDown(): void {
    for (const c of this.conns) {
      this.counts.cut++;
      c.cut();
    }
    this.applyDownMode();
  }

  /** Refuse mode closes the listener, so connecting gets ECONNREFUSED; hang mode keeps accepting. */
  private applyDownMode(): void {
    if (this.settingsNow.whenDown === 'refuse') {
      for (const s of this.hung) this.refuse(s);
      this.hung.clear();
      void this.unlisten();
    } else if (!this.server) void this.listen(this.port).catch((e) => this.listenFailed(e));
  }

  private goUp(): void {
    if (!this.server) void this.listen(this.port).catch((e) => this.listenFailed(e));
    const waiting = [...this.hung];
    this.hung.clear();
    for (const s of waiting) {
      s.removeAllListeners('error');
      this.open(s);
    }
  }

  private listenFailed(e: unknown): void {
    this.o.logger.error({ link: this.o.name, port: this.port, err: String(e) }, 'cannot listen again');
  }

  private onConnection(sock: Socket): void {
    this.counts.total++;
    if (this.isUp) {
      this.open(sock);
      return;
    }
    if (this.settingsNow.whenDown === 'hang' && this.hung.size < this.settingsNow.maxHungConnections) {
      // A hung connection is accepted but never read until the link comes up, like a SYN left unanswered.
      sock.pause();
      sock.on('error', () => this.hung.delete(sock));
      sock.on('close', () => this.hung.delete(sock));
      this.hung.add(sock);
      return;
    }
    this.refuse(sock);
  }

  private refuse(sock: Socket): void {
    this.counts.refused++;
    sock.on('error', () => {});
    sock.resetAndDestroy();
  }

  private open(client: Socket): void {
    const upstream = connect({ host: this.o.targetHost, port: this.o.targetPort, allowHalfOpen: true });
    const conn = new ProxiedConnection(client, upstream, {
      settings: () => this.settingsNow,
      now: this.o.now,
      random: this.o.random,
      uplink: this.uplink,
      downlink: this.downlink,
      onClosed: (c) => this.conns.delete(c),
      onReset: () => this.counts.resets++,
    });
    this.conns.add(conn);
    client.resume();
  }

  private listen(port: number): Promise<void> {
    const server = createServer({ allowHalfOpen: true, pauseOnConnect: true }, (s) => this.onConnection(s));
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, this.o.listenHost, () => {
        server.off('error', reject);
        const addr = server.address();
        if (addr && typeof addr === 'object') this.port = addr.port;
        resolve();
      });
    });
  }

  private unlisten(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return Promise.resolve();
    return new Promise((resolve) => server.close(() => resolve()));
  }
}
