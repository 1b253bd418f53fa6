import { PlanSummarySchema } from '@driftline/protocol';
import { type Command, InvalidArgumentError } from 'commander';
import { readPlanInput } from '../adapters/fs/readPlanInput.js';
import { parsePlanText, summarisePlan } from '../core/plan/summarisePlan.js';
import { renderSummary } from './render.js';

const DEFAULT_MAX_BYTES = 128 * 1024 * 1024;

export function positiveInt(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('must be a positive whole number');
  return n;
}

/** `edge-agent summarize <plan.json|->`: plan JSON in, redacted PlanSummary out. */
export function registerSummarize(program: Command): void {
  program
    .command('summarize')
    .description('Summarise plan JSON (`terraform show -json <planfile>`) into a redacted PlanSummary')
    .argument('<plan>', 'plan JSON file, or - for standard input')
    .option('--json', 'print the PlanSummary as JSON')
    .option('--component <name>', 'component name to put in the summary', 'unknown')
    .option('--environment <name>', 'environment name to put in the summary', 'unknown')
    .option('--max-bytes <n>', 'refuse input larger than this many bytes', positiveInt, DEFAULT_MAX_BYTES)
    .addHelpText(
      'after',
      '\nExit codes: 0 summary printed, 1 input is not a usable plan, 2 usage error.\n\nExample:\n  terraform show -json plan.tfplan | edge-agent summarize - --json --component network --environment prod',
    )
    .action(
      async (
        source: string,
        o: { json?: boolean; component: string; environment: string; maxBytes: number },
      ) => {
        const fail = (message: string) => {
          process.stderr.write(`edge-agent summarize: ${message}\n`);
          process.exitCode = 1;
        };
        const startedAt = new Date().toISOString();
        const input = await readPlanInput(source, o.maxBytes);
        if (!input.ok) return fail(input.message);
        const parsed = parsePlanText(input.text);
        if (!parsed.ok) return fail(`${parsed.reason}: ${parsed.message}`);
        const r = summarisePlan(parsed.value, {
          component: o.component,
          environment: o.environment,
          startedAt,
          finishedAt: new Date().toISOString(),
        });
        if (!r.ok) return fail(`${r.reason}: ${r.message}`);
        const summary = PlanSummarySchema.parse(r.summary);
        if (r.redactionHit) {
          process.stderr.write(
            `edge-agent summarize: the redaction scan hit rule "${r.redactionHit}"; only the status leaves\n`,
          );
        }
        process.stdout.write(o.json ? `${JSON.stringify(summary, null, 2)}\n` : renderSummary(summary));
      },
    );
}
