import { type PlanSummary, PlanSummarySchema } from '@driftline/protocol';
import type { Command } from 'commander';
import pino from 'pino';
import { FsVarFiles } from '../adapters/fs/FsVarFiles.js';
import { TmpScratchSpace } from '../adapters/fs/TmpScratchSpace.js';
import { CliGitProbe } from '../adapters/git/CliGitProbe.js';
import { NodeProcessRunner } from '../adapters/process/NodeProcessRunner.js';
import { loadConfig } from '../config.js';
import { type RunPlanDeps, runPlan } from '../core/plan/runPlan.js';
import { renderSummary } from './render.js';

const OK_STATUSES = new Set(['clean', 'changes', 'drift']);

/** `edge-agent plan --config f.yaml`: runs the configured plans now and prints their summaries. */
export function registerPlan(program: Command): void {
  program
    .command('plan')
    .description(
      'Run the configured plans now (all, or one component/environment) and print their redacted summaries',
    )
    .requiredOption('--config <file>', 'agent configuration (YAML)')
    .option('--component <name>', 'only this component')
    .option('--environment <name>', 'only this environment')
    .option('--json', 'print a JSON array of PlanSummary objects')
    .addHelpText(
      'after',
      '\nExit codes: 0 every plan ran (clean, changes or drift), 1 some run failed, was locked or failed redaction, 2 usage or config error.\n\nExample:\n  edge-agent plan --config /etc/driftline/agent.yaml --component network --environment prod --json',
    )
    .action(async (o: { config: string; component?: string; environment?: string; json?: boolean }) => {
      const loaded = loadConfig(o.config);
      if (!loaded.ok) {
        process.stderr.write(
          `${o.config}: ${loaded.problems.length} problem(s):\n${loaded.problems.map((p) => `  - ${p}`).join('\n')}\n`,
        );
        process.exitCode = 2;
        return;
      }
      const config = loaded.config;
      const targets = config.components
        .filter((c) => !o.component || c.name === o.component)
        .flatMap((c) =>
          c.environments
            .filter((e) => !o.environment || e.name === o.environment)
            .map((e) => [c.name, e.name] as const),
        );
      if (targets.length === 0) {
        const known = config.components
          .flatMap((c) => c.environments.map((e) => `${c.name}/${e.name}`))
          .join(', ');
        process.stderr.write(
          `edge-agent plan: nothing in the config matches that component/environment (configured: ${known})\n`,
        );
        process.exitCode = 2;
        return;
      }
      // Logs go to stderr so `--json` on stdout stays machine-readable.
      const log = pino({ level: process.env.LOG_LEVEL ?? 'info' }, pino.destination(2));
      const deps: RunPlanDeps = {
        proc: new NodeProcessRunner(),
        git: new CliGitProbe(),
        scratch: new TmpScratchSpace(),
        varFiles: new FsVarFiles(),
        clock: { now: () => Date.now() },
        baseEnv: process.env,
        log,
      };
      const results: PlanSummary[] = [];
      for (const [component, environment] of targets) {
        const r = await runPlan(component, environment, config, deps);
        results.push(PlanSummarySchema.parse(r.summary));
        if (!o.json) process.stdout.write(renderSummary(r.summary));
      }
      if (o.json) process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
      if (results.some((s) => !OK_STATUSES.has(s.status))) process.exitCode = 1;
    });
}
