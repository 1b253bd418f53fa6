import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { planOutcome, showOutcome } from '../core/terraform/run.js';
import { parseScenario } from '../core/terraform/scenario.js';

/** Plan runs in one loop of a scenario (`by: runs`): after them the sequence starts again (or stays at its end). */
function loopLength(steps: ReadonlyArray<{ runs?: number }>): number {
  return steps.reduce((n, s) => n + (s.runs ?? 1), 0);
}

/**
 * Records what the fake terraform answers for each plan run of one loop of a cell's scenario (`plan` then
 * `show -json`: the plan JSON with exit 0 or 2; a failure or a lock: Terraform's error text, exit 1) and
 * writes `plan.sh`, which replays the next one for the agent's `command` override. The same plans,
 * failures and locks as the fake terraform program, for a few milliseconds instead of about a second of
 * CPU each: what lets the demo run a fleet on a laptop.
 */
export function writeRecordedPlans(
  wd: string,
  scenario: unknown,
  component: string,
  environment: string,
): void {
  const parsed = parseScenario(scenario);
  if (!parsed.ok)
    throw new Error(
      `invalid fake-terraform scenario for ${environment}/${component}: ${parsed.problems.join('; ')}`,
    );
  const s = parsed.scenario;
  if (s.by !== 'runs')
    throw new Error(`recorded plans need a scenario by runs, ${environment}/${component} is by ${s.by}`);
  const runs = loopLength(s.steps);
  const dir = join(wd, 'recorded');
  mkdirSync(dir, { recursive: true });
  for (let run = 0; run < runs; run++) {
    const o = planOutcome({
      scenario: s,
      run,
      elapsedMs: 0,
      component,
      environment,
      out: 'plan.tfplan',
      detailedExitcode: true,
    });
    let stdout = o.stdout;
    if (o.planFile !== undefined) stdout = showOutcome('plan.tfplan', o.planFile, true).stdout;
    writeFileSync(join(dir, `${run}.out`), stdout);
    writeFileSync(join(dir, `${run}.err`), o.stderr);
    writeFileSync(join(dir, `${run}.code`), `${o.exitCode}\n`);
  }
  writeFileSync(
    join(wd, 'plan.sh'),
    [
      '#!/bin/sh',
      '# Replays the fake terraform: the next recorded plan (JSON on stdout, exit 0 or 2) or error (exit 1).',
      'd="$(dirname "$0")"',
      'n=$(cat "$d/.n" 2>/dev/null || echo 0)',
      'echo $((n + 1)) > "$d/.n"',
      // past the loop: the next one again, or (`loop: false`) the last one for good, as the fake does
      s.loop ? `i=$((n % ${runs}))` : `i=$((n < ${runs} ? n : ${runs - 1}))`,
      'cat "$d/recorded/$i.out"',
      'cat "$d/recorded/$i.err" >&2',
      'exit "$(cat "$d/recorded/$i.code")"',
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
}
