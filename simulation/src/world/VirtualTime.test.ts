import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { VirtualTime } from './VirtualTime.js';

describe('VirtualTime, driving itself', () => {
  it('keeps time moving once the world cannot settle, so a wait bounded in virtual time ends, and names the cause', async () => {
    // a world that never settles: a child process that does not end, and a limit of 20 real waits
    const time = new VirtualTime(20);
    time.install(Date.UTC(2026, 0, 5));
    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      time.drive();
      // a test's bound in virtual time: it ends although the world never became idle again
      const waited = await new Promise<string>((resolve) =>
        setTimeout(() => resolve('bound reached'), 60_000),
      );
      expect(waited).toBe('bound reached');
      await expect(time.stopDriving()).rejects.toThrow(
        /the world is never idle: after 20 waits .*ProcessWrap/,
      );
    } finally {
      child.kill('SIGKILL');
      time.uninstall();
    }
  });
});
