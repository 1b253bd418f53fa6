import { spawn } from 'node:child_process';
import { until } from '@driftline/protocol/testing';
import { describe, expect, it, vi } from 'vitest';
import { stopWithParent } from '../src/lock.js';

/** `DRIFTLINE_EXIT_WITH_PARENT=1`: a daemon stops once whoever started it is gone (src/lock/exitWithParent.ts). */
describe('stopWithParent', () => {
  it('stops once the parent is gone, and not while it lives or when the setting is off', async () => {
    const gone = spawn(process.execPath, ['-e', '0']);
    const pid = gone.pid as number;
    await new Promise((r) => gone.once('exit', r));
    // the watch of a parent other than the one this process started under looks by signal 0: its looks
    // at the live parent (this process) are counted, so that the absence below is one of looks, not of time
    const kill = vi.spyOn(process, 'kill');
    const aliveLooks = () => kill.mock.calls.filter(([p, s]) => p === process.pid && s === 0).length;
    try {
      const stopped: string[] = [];
      const goneStopped = new Promise<void>((resolve) =>
        stopWithParent(
          () => {
            stopped.push('gone');
            resolve();
          },
          { DRIFTLINE_EXIT_WITH_PARENT: '1' },
          10,
          pid,
        ),
      );
      const unwatch = stopWithParent(
        () => stopped.push('alive'),
        { DRIFTLINE_EXIT_WITH_PARENT: '1' },
        10,
        process.pid,
      );
      stopWithParent(() => stopped.push('off'), {}, 10, pid);
      await goneStopped;
      // nothing else stops: the live parent's watch looks five more times and never does ('off' never watches)
      const looked = aliveLooks();
      await until(() => aliveLooks() >= looked + 5, 'the live parent’s watch looking five more times');
      unwatch();
      expect(stopped).toEqual(['gone']);
    } finally {
      kill.mockRestore();
    }
  });
});
