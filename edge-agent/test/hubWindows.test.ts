import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { asAgentId, asSiteId, type ContactWindowsPayload } from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqliteLedger } from '../src/adapters/sqlite/openSqliteLedger.js';
import { contactStatus, renderContact } from '../src/commands/contactStatus.js';
import { HubWindowsHeld, readHubWindows } from '../src/core/sync/hubWindows.js';

const POLAR = 'every 4m for 40s from 2026-11-27T00:00:00Z';
const BERLIN = '0 2 * * * for 30m tz Europe/Berlin';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function open(dir: string) {
  return openSqliteLedger({ path: join(dir, 'agent.sqlite'), site: 'ship-7', agent: 'a1' });
}

const control = (windows: string[], declaredAt: number, site = 'ship-7'): ContactWindowsPayload => ({
  type: 'contact-windows',
  site: asSiteId(site),
  agent: asAgentId('a1'),
  windows,
  declaredAt,
});

/** The windows the hub declares for the site, held by the agent (docs/decisions/590-windows-declared-once.md). */
describe("the agent holds the hub's declared windows", () => {
  it('takes the newest, ignores older and other sites, leaves out what it cannot read, and keeps them across a restart', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-hub-windows-'));
    dirs.push(dir);
    const warned: unknown[] = [];
    const log = { info: () => {}, warn: (o: unknown) => warned.push(o) };
    const first = open(dir);
    const held = new HubWindowsHeld(first.ledger.storage, { site: 'ship-7', agent: 'a1' }, log);
    expect(held.windows()).toEqual([]);
    expect(held.take(control([POLAR, 'every four minutes'], 2000))).toBe(true);
    expect(held.windows()).toEqual([POLAR]);
    expect(warned).toEqual([expect.objectContaining({ window: 'every four minutes' })]);
    expect(held.take(control([BERLIN], 1000))).toBe(false); // older
    expect(held.take(control([BERLIN], 3000, 'ship-8'))).toBe(false); // another site's
    expect(held.take(control([POLAR], 3000))).toBe(false); // newer, the same windows
    expect(held.take(control([BERLIN], 4000))).toBe(true);
    first.ledger.close();

    const again = open(dir);
    expect(readHubWindows(again.ledger.storage)).toEqual([BERLIN]);
    const after = new HubWindowsHeld(again.ledger.storage, { site: 'ship-7', agent: 'a1' }, log);
    expect(after.take(control([POLAR], 3500))).toBe(false); // still older than what it holds
    expect(after.take(control([], 5000))).toBe(true); // withdrawn
    expect(after.windows()).toEqual([]);
    again.ledger.close();
  });

  it('edge-agent status aims at them and names where each was declared', () => {
    const now = Date.parse('2026-11-27T00:01:00Z');
    const c = contactStatus([], 900, now, [POLAR]);
    expect(c).toMatchObject({ planned: true, fromHub: [POLAR], next: { start: '2026-11-27T00:04:00.000Z' } });
    const text = renderContact(c, now);
    expect(text).toContain('next window 2026-11-27T00:04:00.000Z');
    expect(text).toContain(`declared at the hub: ${POLAR}`);
    expect(text).not.toContain('               declared: ');
    expect(renderContact(contactStatus([], 900, now), now)).toMatch(/none declared .*contactPlans\.sites/);
  });
});
