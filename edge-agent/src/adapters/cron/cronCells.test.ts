import { describe, expect, it } from 'vitest';
import { cadenceSeconds } from './cronCells.js';

describe('cadenceSeconds', () => {
  it('reads the interval a cron expression declares', () => {
    expect(cadenceSeconds('*/15 * * * *')).toBe(900);
    expect(cadenceSeconds('0 */6 * * *')).toBe(21_600);
    expect(cadenceSeconds('*/10 * * * * *')).toBe(10);
  });

  it('takes the longest gap of an uneven schedule', () => {
    expect(cadenceSeconds('0 9,17 * * *')).toBe(16 * 3600);
  });
});
