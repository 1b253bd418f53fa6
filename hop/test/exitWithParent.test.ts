import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { stopWithParent } from '../src/lock.js';

/** `DRIFTLINE_EXIT_WITH_PARENT=1`: a daemon stops once whoever started it is gone (src/lock/exitWithParent.ts). */
describe('stopWithParent', () => {
  it('stops once the parent is gone, and not while it lives or when the setting is off', async () => {
    const gone = spawn(process.execPath, ['-e', '0']);
    const pid = gone.pid as number;
    await new Promise((r) => gone.once('exit', r));
    const stopped: string[] = [];
    stopWithParent(() => stopped.push('gone'), { DRIFTLINE_EXIT_WITH_PARENT: '1' }, 10, pid);
    const unwatch = stopWithParent(
      () => stopped.push('alive'),
      { DRIFTLINE_EXIT_WITH_PARENT: '1' },
      10,
      process.pid,
    );
    stopWithParent(() => stopped.push('off'), {}, 10, pid);
    // bounded: at most 2 s of 10 ms turns
    for (let i = 0; i < 200 && stopped.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 50));
    unwatch();
    expect(stopped).toEqual(['gone']);
  });
});
