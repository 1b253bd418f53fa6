import { parseSchedule } from '@driftline/protocol';
import { checkScheduleCases, SCHEDULE_CASES } from '../../../protocol/test/scheduleCases.js';

// Bundled by Vite for the browser (ui/test/e2e/schedule.test.ts) and run in Chromium.
(globalThis as { scheduleResult?: unknown }).scheduleResult = {
  cases: SCHEDULE_CASES.length,
  wrong: checkScheduleCases(parseSchedule),
};
