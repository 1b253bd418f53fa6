import pino from 'pino';

/**
 * Where a daemon's pino logger writes (hub, relay, agent): its stderr, one JSON line per call, never able
 * to hold the process once stderr's reader is gone (docs/operations.md, "Under a supervisor of your own").
 *
 * Synchronous: each line is written before the call returns, so none waits in a buffer for the exit
 * flush pino registers for an asynchronous destination. That flush (SonicBoom's `flushSync`) retries a
 * failed write every 100 ms for good, EPIPE included: a line logged while an earlier one was still being
 * written to the pipe of a supervisor that had died met EPIPE there on each try, and the agent, inside
 * `process.exit`, never stopped (nor answered SIGTERM, whose handler is JavaScript). A sync write to a
 * pipe whose reader is gone fails at once with EPIPE; from the first write error on, lines are dropped
 * (there is nowhere left to say so). Also makes an EPIPE on `process.stderr` (a plain
 * `process.stderr.write`) harmless instead of an uncaught exception.
 */
export function stderrLog(): pino.DestinationStream {
  const out = pino.destination({ dest: 2, sync: true });
  let broken = false;
  // pino's own listener turns EPIPE into dropped lines; this one does the same for any other write error
  // (pino re-emits those, which with no listener would throw from the logging call)
  out.on('error', () => {
    broken = true;
  });
  if (!process.stderr.listeners('error').includes(ignoreBrokenPipe))
    process.stderr.on('error', ignoreBrokenPipe);
  return {
    write(line: string) {
      if (!broken) out.write(line);
    },
  };
}

function ignoreBrokenPipe(e: NodeJS.ErrnoException): void {
  if (e.code !== 'EPIPE') throw e;
}
