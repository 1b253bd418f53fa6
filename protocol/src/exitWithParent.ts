/**
 * For programs a supervisor starts as children (the demo, the simulator, the tests): with
 * `DRIFTLINE_EXIT_WITH_PARENT=1` in its environment a daemon stops as on SIGTERM once the process that
 * started it is gone, so a demo or a test worker killed with SIGKILL leaves no hub, relay or agent behind
 * holding ports and data folders. Checked every `everyMs` with signal 0 (no signal is sent); the timer
 * never keeps the process alive; the answer stops the watch. Off by default: a daemon under systemd or a shell must outlive them.
 */
export function stopWithParent(
  stop: () => void,
  env: NodeJS.ProcessEnv = process.env,
  everyMs = 2000,
  parent: number = process.ppid,
): () => void {
  if (env.DRIFTLINE_EXIT_WITH_PARENT !== '1' || parent <= 1) return () => {};
  const timer = setInterval(() => {
    try {
      process.kill(parent, 0);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ESRCH') return; // EPERM: there, another user's
      clearInterval(timer);
      stop();
    }
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
