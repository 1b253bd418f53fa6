import { stderrLog } from '@driftline/hop/lock';
import { type PlanSummary, PlanSummarySchema } from '@driftline/protocol';
import type { Command } from 'commander';
import pino from 'pino';
import { planDeps } from '../adapters/planDeps.js';
import { loadConfig } from '../config.js';
import { allowsRef } from '../core/plan/refPolicy.js';
import { runPlan } from '../core/plan/runPlan.js';
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
    .option(
      '--ref <ref>',
      "plan this ref from the site's git mirror (components with source; must match source.refs)",
    )
    .option('--commit <sha>', 'plan this commit of the ref (the mirror must hold it)')
    .option('--json', 'print a JSON array of PlanSummary objects')
    .addHelpText(
      'after',
      '\nExit codes: 0 every plan ran (clean, changes or drift), 1 some run failed, was locked or blocked, or failed redaction, 2 usage or config error.\n\nExample:\n  edge-agent plan --config /etc/driftline/agent.yaml --component network --environment prod --json\n  edge-agent plan --config agent.yaml --component dns --environment prod --ref pr/42',
    )
    .action(
      async (o: {
        config: string;
        component?: string;
        environment?: string;
        ref?: string;
        commit?: string;
        json?: boolean;
      }) => {
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
        const refused = o.ref ? targets.filter(([c, e]) => !allowsRef(config, e, c, o.ref)) : [];
        if (refused.length > 0) {
          process.stderr.write(
            `edge-agent plan: --ref ${o.ref} is not allowed for ${refused.map(([c, e]) => `${c}/${e}`).join(', ')} (only components with source, and only refs their source.refs match)\n`,
          );
          process.exitCode = 2;
          return;
        }
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
        const log = pino({ level: process.env.LOG_LEVEL ?? 'info' }, stderrLog());
        const deps = planDeps(config, log, () => Date.now());
        const results: PlanSummary[] = [];
        for (const [component, environment] of targets) {
          const r = await runPlan(component, environment, config, deps, {
            source: { ref: o.ref, commit: o.commit },
          });
          results.push(PlanSummarySchema.parse(r.summary));
          if (!o.json) process.stdout.write(renderSummary(r.summary));
        }
        if (o.json) process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
        if (results.some((s) => !OK_STATUSES.has(s.status))) process.exitCode = 1;
      },
    );
}
