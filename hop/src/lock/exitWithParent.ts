import { readFileSync } from 'node:fs';

/**
 * The parent this process had when this module loaded, before the program logged that it is ready: read
 * later, a supervisor killed in between (a test that kills it on the ready line, on a loaded machine) has
 * already handed the process to init, and the watch would watch init, or nothing.
 */
const STARTED_UNDER = process.ppid;

/**
 * For programs a supervisor starts as children (the demo, the simulator, the tests): with
 * `DRIFTLINE_EXIT_WITH_PARENT=1` in its environment a daemon stops as on SIGTERM once the process that
 * started it is gone, so a demo or a test worker killed with SIGKILL leaves no hub, relay or agent behind
 * holding ports and data folders. Checked every `everyMs` (`parentGone`); the timer never keeps the
 * process alive; the answer stops the watch. Off by default: a daemon under systemd or a shell must outlive them.
 */
export function stopWithParent(
  stop: () => void,
  env: NodeJS.ProcessEnv = process.env,
  everyMs = 2000,
  parent: number = STARTED_UNDER,
): () => void {
  if (env.DRIFTLINE_EXIT_WITH_PARENT !== '1' || parent <= 1) return () => {};
  const timer = setInterval(() => {
    if (!parentGone(parent, STARTED_UNDER)) return;
    clearInterval(timer);
    stop();
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Whether `parent` is gone. Watching the parent this process started under (`first`, the usual case):
 * gone once this process has another parent, read on Linux from /proc. A killed supervisor is a zombie
 * until its own parent reaps it, and signal 0 still finds a zombie: a supervisor whose parent was slow
 * to reap it (a busy test worker, a shell that never waits) once left its agent running for the whole
 * wait. Watching another pid, or with no /proc: signal 0 (no signal is sent; EPERM: another user's).
 */
function parentGone(parent: number, first: number): boolean {
  if (parent === first) {
    try {
      const stat = readFileSync('/proc/self/stat', 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (Number.isInteger(ppid)) return ppid !== parent;
    } catch {
      // no /proc: Node's own reading
    }
    if (process.ppid !== parent) return true;
  }
  try {
    process.kill(parent, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * `process.exit(code)`, sure to end the process: an 'exit' listener that throws (a library's last flush)
 * makes `process.exit` throw back to its caller and the process run on; the second call skips the
 * listeners and ends it. A listener that never returns it cannot help: a daemon's logger registers none
 * (stderrLog).
 */
export function exitProcess(code: number): never {
  try {
    process.exit(code);
  } catch {
    process.exit(code);
  }
}
