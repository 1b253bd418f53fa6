import { readFileSync } from 'node:fs';

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
  parent: number = process.ppid,
): () => void {
  if (env.DRIFTLINE_EXIT_WITH_PARENT !== '1' || parent <= 1) return () => {};
  const timer = setInterval(() => {
    if (!parentGone(parent)) return;
    clearInterval(timer);
    stop();
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Whether `parent` is no longer this process's parent. On Linux the parent is read from /proc (a parent
 * killed but not yet reaped by its own parent is a zombie: signal 0 still finds it, while this process
 * was already handed to init); elsewhere, signal 0 (no signal is sent; EPERM: there, another user's).
 */
function parentGone(parent: number): boolean {
  try {
    if (parent !== process.ppid) throw new Error("not this process's first parent");
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (Number.isInteger(ppid)) return ppid !== parent;
  } catch {
    // no /proc (or another pid to watch): ask the pid
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
