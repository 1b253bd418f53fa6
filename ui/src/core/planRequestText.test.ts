import { encodeUlid, type PlanRequest } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { planRequestText } from './planRequestText.js';

const ASKED = Date.parse('2026-11-27T12:03:10Z');
const time = (iso: string) => iso.slice(11, 19);
const req = (over: Partial<PlanRequest>): PlanRequest => ({
  site: 'ship-7' as PlanRequest['site'],
  environment: 'prod',
  component: 'network',
  requestId: 'r1',
  state: 'pending',
  requestedAt: new Date(ASKED).toISOString(),
  expiresAt: '2026-11-28T12:03:10.000Z',
  deliveredAt: null,
  doneAt: null,
  runId: null,
  ...over,
});
const run = (at: number) => encodeUlid(at, new Uint8Array(10)) as PlanRequest['runId'];

describe('planRequestText', () => {
  it('follows the request from asked to delivered to done, with its times', () => {
    expect(planRequestText(req({}), time)).toBe('asked 12:03:10, waiting for the site');
    expect(planRequestText(req({ state: 'delivered', deliveredAt: '2026-11-27T12:03:41.000Z' }), time)).toBe(
      'asked 12:03:10, delivered 12:03:41, waiting for the run',
    );
    const newer = run(ASKED + 20_000);
    expect(
      planRequestText(req({ state: 'done', doneAt: '2026-11-27T12:04:02.000Z', runId: newer }), time),
    ).toBe(`asked 12:03:10, done 12:04:02: run ${newer}`);
  });

  it('says which relay holds it, that it runs, and that the agent refused it (decision 560)', () => {
    const relayAt = '2026-11-27T12:03:12.000Z';
    expect(planRequestText(req({ relay: 'relay-1', relayAt }), time)).toBe(
      'asked 12:03:10, at relay-1 12:03:12, waiting for the site',
    );
    expect(
      planRequestText(req({ state: 'running', relayAt, startedAt: '2026-11-27T12:03:45.000Z' }), time),
    ).toBe('asked 12:03:10, running since 12:03:45');
    expect(planRequestText(req({ state: 'refused' }), time)).toBe('asked 12:03:10, refused by the agent');
  });

  it('never names a run planned before the click as the answer', () => {
    const older = run(ASKED - 3_600_000);
    const text = planRequestText(
      req({ state: 'done', doneAt: '2026-11-27T12:04:02.000Z', runId: older }),
      time,
    );
    expect(text).toBe(`asked 12:03:10, done 12:04:02: planned again, unchanged since run ${older}`);
    expect(text).not.toMatch(new RegExp(`: run ${older}$`));
  });

  it('says when the agent has not confirmed it and when it expired', () => {
    expect(planRequestText(req({ unconfirmed: true }), time)).toContain('unconfirmed');
    expect(planRequestText(req({ state: 'expired' }), time)).toBe(
      'asked 12:03:10, expired 12:03:10 before the site picked it up',
    );
  });
});
