import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HopClient } from '@driftline/hop/client';
import { expect, it, vi } from 'vitest';
import { sha256Hex } from '../src/adapters/http/credentials.js';
import { DOWNLINK_CHANNEL } from '../src/adapters/postgres/downlinkNotice.js';
import { PgDatabase } from '../src/adapters/postgres/PgDatabase.js';
import { PgDownlinkBell } from '../src/adapters/postgres/PgDownlinkBell.js';
import { createHub } from '../src/app.js';
import { parseConfig } from '../src/config.js';
import { DownlinkBell, WATCH_MAX_S } from '../src/core/downlinkBell.js';
import { TestClock } from './agentSim.js';
import { describePg, type PgServer } from './postgres.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 180_000 });

/** Beyond any test's reach: a held watch reads the store again only when its bell rings. */
const HOUR_MS = 3_600_000;

/** A bell that tells what rang it and when a watch is held (the tests wait on those, never on time). */
class TellingBell extends DownlinkBell {
  readonly rings: Array<readonly string[] | 'every'> = [];
  private readonly waiters = new Set<() => boolean>();
  private heldNow: (() => void) | null = null;
  override ring(sites: Iterable<string>): void {
    const rung = [...sites];
    this.rings.push(rung);
    super.ring(rung);
    this.told();
  }
  override ringEvery(): void {
    this.rings.push('every');
    super.ringEvery();
    this.told();
  }
  /** Resolves once `holds` is true of the rings (asked now and at each ring). */
  rang(holds: (rings: TellingBell['rings']) => boolean): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        if (!holds(this.rings)) return false;
        resolve();
        return true;
      };
      if (!check()) this.waiters.add(check);
    });
  }
  private told(): void {
    for (const w of [...this.waiters]) if (w()) this.waiters.delete(w);
  }
  held(): Promise<void> {
    return new Promise((resolve) => {
      this.heldNow = resolve;
    });
  }
  override listen(...args: Parameters<DownlinkBell['listen']>) {
    const ticket = super.listen(...args);
    return {
      ...ticket,
      wait: (...w: Parameters<typeof ticket.wait>) => {
        const p = ticket.wait(...w);
        this.heldNow?.();
        return p;
      },
    };
  }
}

/** A real hub on port 0 on the shared database, its held watches read the store again only hourly. */
async function hubOn(server: PgServer, url: string, clock: TestClock, bell: DownlinkBell) {
  const dir = mkdtempSync(join(tmpdir(), 'hub-pg-bell-'));
  const cfg = parseConfig(
    {
      dataDir: dir,
      uiDir: join(dir, 'no-ui'),
      listen: { host: '127.0.0.1', port: 0 },
      store: { kind: 'postgres', url, passwordFile: join(server.dir, 'pw') },
    },
    dir,
    {},
  );
  if (!cfg.ok) throw new Error(cfg.errors.join('; '));
  const hub = await createHub(cfg.config, { clock, bell, watchRecheckMs: HOUR_MS });
  const { hop } = await hub.listen();
  return {
    hub,
    hop,
    close: async () => {
      await hub.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describePg('the downlink bell across hubs sharing one PostgreSQL database (decision 635)', (server) => {
  it('answers a watch held at hub A as soon as hub B commits downlink for one of its sites', async () => {
    const url = await server().createDatabase();
    const clock = new TestClock();
    const bellA = new TellingBell();
    const a = await hubOn(server(), url, clock, bellA);
    const b = await hubOn(server(), url, clock, new DownlinkBell());
    try {
      await a.hub.store.commit({
        peers: [{ tokenSha256: sha256Hex('relay-token'), name: 'relay-1', sites: ['ship-7', 'ship-9'] }],
      });
      // A listens on the channel (opening its listener rings every site once)
      await bellA.rang((r) => r.includes('every'));
      const client = new HopClient({ url: a.hop, token: 'relay-token', timeoutMs: 30_000 });
      const held = bellA.held();
      const answer = client.watchDownlink(
        new Map([
          ['ship-7', '0'],
          ['ship-9', '0'],
        ]),
        WATCH_MAX_S,
      );
      await held;
      await b.hub.store.commit({
        downlink: [
          {
            site: 'ship-9',
            agent: null,
            kind: 'control',
            docId: null,
            requestId: null,
            bytes: new Uint8Array([1]),
            expiresAt: clock.now() + HOUR_MS,
          },
        ],
      });
      expect(await answer).toEqual({ ok: true, value: { sites: ['ship-9'], refused: [] } });
      expect(bellA.rings).toContainEqual(['ship-9']);
    } finally {
      await b.close();
      await a.close();
    }
  });

  it('rings every site for a list too long to send and for a payload not understood, and not for its own', async () => {
    const url = await server().createDatabase();
    const dbA = new PgDatabase({ url, password: server().password });
    const dbB = new PgDatabase({ url, password: server().password });
    const bellA = new TellingBell();
    const a = new PgDownlinkBell(dbA, bellA);
    const b = new PgDownlinkBell(dbB, new DownlinkBell());
    try {
      await bellA.rang((r) => r.length > 0);
      expect(bellA.rings).toEqual(['every']);
      // A's own notice comes back to it, committed before B's: only B's rings A's bell
      a.tell(['ship-7']);
      await a.sent();
      b.tell(['ship-9', 'ship-9']);
      await bellA.rang((r) => r.length > 1);
      expect(bellA.rings).toEqual(['every', ['ship-9']]);
      // more sites than a notification holds
      b.tell(Array.from({ length: 3000 }, (_, i) => `site-${i}`));
      await bellA.rang((r) => r.length > 2);
      expect(bellA.rings).toEqual(['every', ['ship-9'], 'every']);
      // whatever else is on the channel
      await dbB.pool.query('SELECT pg_notify($1, $2)', [DOWNLINK_CHANNEL, 'ship-7 and then some']);
      await bellA.rang((r) => r.length > 3);
      expect(bellA.rings).toEqual(['every', ['ship-9'], 'every', 'every']);
    } finally {
      await b.close();
      await a.close();
      await dbA.close();
      await dbB.close();
    }
  });
});
