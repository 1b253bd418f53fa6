import { exitProcess, stderrLog, stopWithParent } from '@driftline/hop/lock';
import type { Command } from 'commander';
import pino from 'pino';
import { startAgent } from '../app.js';
import { ConfigProblem } from '../configProblem.js';
import { configOrExit } from './configOrExit.js';
import { uploadProgressBar } from './progress.js';

/** `edge-agent run --config f.yaml`: the daemon. */
export function registerRun(program: Command): void {
  program
    .command('run')
    .description('Run the agent: plans on each component’s schedule, records results, syncs them upstream')
    .requiredOption('--config <file>', 'agent configuration (YAML)')
    .option('--no-schedule', 'do not start the cron schedules (plans run only on hub requests)')
    .addHelpText(
      'after',
      '\nLogs are JSON lines on stderr (LOG_LEVEL=debug|info|warn|error). SIGTERM or Ctrl-C finishes the\n' +
        'current runs (up to 30 s), flushes and exits 0; uploads pause and resume on the next start, and\n' +
        'an exchange with an upstream still waiting for its answer is cut and sent again then.\n' +
        'Exit 2 on a configuration or credential problem (the file, a missing key, a data directory another\n' +
        'agent holds: one line naming its PID), 1 on any other failure to start.\n\n' +
        'Example:\n  edge-agent run --config /etc/driftline/agent.yaml',
    )
    .action(async (o: { config: string; schedule: boolean }) => {
      const config = configOrExit(o.config);
      if (!config) return;
      // written synchronously, dropped once stderr's reader is gone: a stop cannot wait on a log line
      const log = pino(
        { level: process.env.LOG_LEVEL ?? 'info', base: { site: config.site, agent: config.agent } },
        stderrLog(),
      );
      let agent: Awaited<ReturnType<typeof startAgent>> | undefined;
      let stopping = false;
      const stop = async (signal: string) => {
        if (stopping) return;
        stopping = true;
        // Exits whatever the stop meets (a throw here once left it running). stderr may be the pipe of a
        // supervisor that died (DRIFTLINE_EXIT_WITH_PARENT): its log lines are then dropped (stderrLog).
        const grace = new Promise((r) => setTimeout(r, 30_000).unref());
        try {
          log.info({ signal }, 'stopping');
          // still starting: it exits at once (nothing runs yet that a stop would finish; what it holds is
          // durable, and a data directory lock of a gone process does not block the next start)
          if (agent) await Promise.race([agent.stop(), grace]);
        } finally {
          exitProcess(0);
        }
      };
      // Before the start logs anything: a supervisor that sends SIGTERM as soon as it reads a line must
      // not meet the default action (killed, exit code null) while the handler is not installed yet.
      process.on('SIGTERM', () => void stop('SIGTERM'));
      process.on('SIGINT', () => void stop('SIGINT'));
      stopWithParent(() => void stop('parent gone')); // DRIFTLINE_EXIT_WITH_PARENT=1: a supervisor's child
      try {
        agent = await startAgent(config, {
          log,
          schedule: o.schedule,
          onUploadProgress: uploadProgressBar(),
        });
      } catch (e) {
        process.stderr.write(`edge-agent run: ${(e as Error).message}\n`);
        // a key, a pinned key or a data directory held by another agent: configuration (2), else 1
        process.exitCode = e instanceof ConfigProblem ? 2 : 1;
      }
    });
}
