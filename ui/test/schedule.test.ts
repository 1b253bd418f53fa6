import { parseSchedule } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { checkScheduleCases, SCHEDULE_CASES } from '../../protocol/test/scheduleCases.js';

// The dashboard's own test environment (happy-dom): the schedule module the hub, relay and agent use
// answers the awkward-expression table the same here. ui/test/e2e/schedule.test.ts runs it in Chromium.
describe('schedules under the dashboard', () => {
  it('agrees with standard cron on every expression of the table', () => {
    expect(typeof window).toBe('object');
    expect(SCHEDULE_CASES.length).toBeGreaterThan(15);
    expect(checkScheduleCases(parseSchedule)).toEqual([]);
  });
});
