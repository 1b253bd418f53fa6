import type { HopFailure } from '@driftline/hop/client';
import { describe, expect, it } from 'vitest';
import type { Upstream } from '../ports/Upstream.js';
import { windowsOf } from './contactPlan.js';
import type { UpstreamSlot } from './upstreamSlot.js';
import { watchStep } from './watchStep.js';

type Answer = { ok: true; sites: string[]; refused: string[] } | HopFailure;

/** An upstream whose watch answers `answer`, recording what each watch asked. */
function slotWith(answer: Answer, windows: string[] = []) {
  const asked: Array<{ cursors: Map<string, string>; waitS: number }> = [];
  const upstream = {
    name: 'hub',
    watchDownlink: async (cursors: ReadonlyMap<string, string>, waitS: number) => {
      asked.push({ cursors: new Map(cursors), waitS });
      return answer;
    },
  } as unknown as Upstream;
  const slot: UpstreamSlot = { upstream, plan: { windows: windowsOf(windows) }, failures: 0, retryAt: 0 };
  return { slot, asked };
}

const custody = { upstreamCursor: (_u: string, site: string) => (site === 'ship-7' ? '41' : undefined) };
const failure = (status: number): HopFailure => ({
  ok: false,
  code: status === 404 ? 'not-found' : 'internal',
  message: `HTTP ${status}`,
  retryable: status !== 404,
  status,
});

describe('one round of the downlink watch (decision 620)', () => {
  const t = Date.parse('2026-01-05T02:05:00Z');
  const run = (slot: UpstreamSlot, pulled: string[][]) =>
    watchStep({
      custody,
      slot,
      sites: ['ship-7', 'ship-9'],
      now: () => t,
      waitS: 3600,
      pull: async (sites) => {
        pulled.push([...sites]);
        return 0;
      },
    });

  it('names every site with its cursor and pulls only the sites the answer names', async () => {
    const { slot, asked } = slotWith({ ok: true, sites: ['ship-9'], refused: [] });
    const pulled: string[][] = [];
    expect(await run(slot, pulled)).toEqual({ kind: 'pulled', sites: 1, taken: 0, refused: [] });
    expect(asked[0]?.cursors).toEqual(
      new Map([
        ['ship-7', '41'],
        ['ship-9', '0'],
      ]),
    );
    expect(asked[0]?.waitS).toBe(3600);
    expect(pulled).toEqual([['ship-9']]);
  });

  it('holds no longer than the contact window is open', async () => {
    const { slot, asked } = slotWith({ ok: true, sites: [], refused: [] }, ['0 */2 * * * for 10m']);
    expect(await run(slot, [])).toEqual({ kind: 'quiet', early: true, refused: [] });
    expect(asked[0]?.waitS).toBe(300);
  });

  it('goes back to pulling on a 404, and pulls every site when the watch fails otherwise', async () => {
    const none: string[][] = [];
    expect(await run(slotWith(failure(404)).slot, none)).toEqual({ kind: 'unsupported' });
    expect(none).toEqual([]);
    const all: string[][] = [];
    expect(await run(slotWith(failure(500)).slot, all)).toMatchObject({ kind: 'failed' });
    expect(all).toEqual([['ship-7', 'ship-9']]);
  });

  it('tells a quiet answer at the end of its hold from one let go early, and counts what the pulls took', async () => {
    let clock = t;
    const upstream = {
      name: 'hub',
      watchDownlink: async (_c: ReadonlyMap<string, string>, waitS: number) => {
        clock += waitS * 1000;
        return { ok: true, sites: [], refused: [] };
      },
    } as unknown as Upstream;
    const slot: UpstreamSlot = { upstream, plan: { windows: [] }, failures: 0, retryAt: 0 };
    const step = (pull: () => Promise<number>) =>
      watchStep({ custody, slot, sites: ['ship-7'], now: () => clock, waitS: 60, pull });
    expect(await step(async () => 0)).toEqual({ kind: 'quiet', early: false, refused: [] });
    const named = slotWith({ ok: true, sites: ['ship-7'], refused: [] });
    expect(
      await watchStep({
        custody,
        slot: named.slot,
        sites: ['ship-7'],
        now: () => t,
        waitS: 60,
        pull: async () => 3,
      }),
    ).toEqual({ kind: 'pulled', sites: 1, taken: 3, refused: [] });
  });
});
