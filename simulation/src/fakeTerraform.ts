import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadScenario, nextRun } from './adapters/fs/scenarioFiles.js';
import { parseArgs } from './core/terraform/args.js';
import { type Outcome, planOutcome, showOutcome, versionOutcome } from './core/terraform/run.js';

/**
 * A terraform-compatible program for simulations and tests (`simulation/bin/terraform`):
 * `plan [-json] -out=<file> -detailed-exitcode [-var-file=<f>…]`, `show -json <file>`, `version [-json]`,
 * `init`, `validate`, driven by the scenario in the working directory. Environment:
 *   FAKE_TERRAFORM_SCENARIO     scenario file (default: ./fake-terraform.yaml|yml|json, else a built-in cycle)
 *   FAKE_TERRAFORM_STATE_DIR    where the run counter lives (default: ./.fake-terraform)
 *   FAKE_TERRAFORM_ENVIRONMENT  environment name when the scenario has none (default: TF_WORKSPACE or "default")
 *   FAKE_TERRAFORM_TIMESTAMP    "now" stamps plans with the real time (default: a fixed time, byte-identical plans)
 */
async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<Outcome> {
  const cmd = parseArgs(argv);
  const dir = resolve(cmd.chdir ?? '.');
  const loaded = loadScenario(dir, env);
  if (!loaded.ok) {
    return {
      exitCode: 1,
      stdout: '',
      stderr: `Error: invalid fake-terraform scenario ${loaded.path}:\n${loaded.problems.map((p) => `  - ${p}`).join('\n')}\nFix the file (see simulation/README.md, "Fake terraform").\n`,
    };
  }
  const s = loaded.scenario;
  switch (cmd.verb) {
    case 'version':
      return versionOutcome(s.terraformVersion, cmd.json);
    case 'init':
      return { exitCode: 0, stdout: '\nTerraform has been successfully initialized!\n', stderr: '' };
    case 'validate':
      return { exitCode: 0, stdout: 'Success! The configuration is valid.\n', stderr: '' };
    case 'show': {
      if (!cmd.file) return { exitCode: 0, stdout: '{"format_version":"1.0"}\n', stderr: '' };
      const path = resolve(dir, cmd.file);
      return showOutcome(cmd.file, existsSync(path) ? readFileSync(path, 'utf8') : null, cmd.json);
    }
    case 'plan': {
      const { run, elapsedMs } = nextRun(dir, env, Date.now());
      const o = planOutcome({
        scenario: s,
        run,
        elapsedMs,
        component: s.component ?? basename(dir),
        environment: s.environment ?? env.FAKE_TERRAFORM_ENVIRONMENT ?? env.TF_WORKSPACE ?? 'default',
        out: cmd.out,
        detailedExitcode: cmd.detailedExitcode,
        json: cmd.json,
        varFiles: cmd.varFiles.flatMap((f) => {
          const path = resolve(dir, f);
          return existsSync(path) ? [{ path: f, text: readFileSync(path, 'utf8') }] : [];
        }),
        timestamp:
          env.FAKE_TERRAFORM_TIMESTAMP === 'now'
            ? new Date().toISOString().replace(/\.\d+Z$/, 'Z')
            : undefined,
      });
      if (o.sleepMs) await sleep(o.sleepMs);
      if (o.planFile !== undefined && cmd.out) writeFileSync(resolve(dir, cmd.out), o.planFile);
      return o;
    }
    default:
      return {
        exitCode: 1,
        stdout: '',
        stderr: `Terraform has no command named "${cmd.name}" (this fake knows plan, show, version, init, validate).\n`,
      };
  }
}

const o = await main(process.argv.slice(2), process.env);
process.stdout.write(o.stdout);
process.stderr.write(o.stderr);
// exitCode rather than exit(): a large plan JSON on a pipe must be flushed completely first.
process.exitCode = o.exitCode;
