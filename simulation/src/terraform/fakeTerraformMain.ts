import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { LOCK_FILE_MAX_CHARS, parseLockFile, terraformPlatform } from '@driftline/protocol';
import {
  configurationDigest,
  fsMirror,
  readInstalled,
  readTextFile,
  recordInstalled,
} from '../adapters/fs/providerFiles.js';
import {
  readMirroredZips,
  readProviderCache,
  writeIndexes,
  writeZip,
} from '../adapters/fs/providerMirrorFiles.js';
import { loadScenario, nextRun } from '../adapters/fs/scenarioFiles.js';
import { applyOutcome, type FakeState } from '../core/terraform/apply.js';
import { parseArgs } from '../core/terraform/args.js';
import { type InstallMethod, parseCliConfig } from '../core/terraform/cliConfig.js';
import {
  initOutcome,
  pluginsProblem,
  type RequiredProvider,
  requiredProviders,
} from '../core/terraform/init.js';
import { box } from '../core/terraform/messages.js';
import { fetchModules } from '../core/terraform/modules.js';
import { mirrorIndexes, planMirror } from '../core/terraform/providersMirror.js';
import { type Outcome, planOutcome, showOutcome, versionOutcome } from '../core/terraform/run.js';
import type { Scenario } from '../core/terraform/scenario.js';

/**
 * A terraform-compatible program for simulations and tests (`simulation/bin/terraform`):
 * `plan [-json] -out=<file> -detailed-exitcode [-var-file=<f>…]`, `show -json <file>`, `version [-json]`,
 * `init [-plugin-dir=<dir>…]` (providers from mirrors, offline), `validate`, `apply <planfile>` (a saved
 * plan only: stale once the state serial moved, failing mid-apply for an `apply-error` step), driven by
 * the scenario in the working directory. Environment:
 *   FAKE_TERRAFORM_SCENARIO     scenario file (default: ./fake-terraform.yaml|yml|json, else a built-in cycle)
 *   FAKE_TERRAFORM_STATE_DIR    where the run counter and state serial live (default: ./.fake-terraform)
 *   FAKE_TERRAFORM_APPLY        "error": every apply fails part-way through
 *   FAKE_TERRAFORM_ENVIRONMENT  environment name when the scenario has none (default: TF_WORKSPACE or "default")
 *   FAKE_TERRAFORM_TIMESTAMP    "now" stamps plans with the real time (default: a fixed time, byte-identical plans)
 *   FAKE_TERRAFORM_NETWORK      "1": a registry is reachable (default: offline, as at a site)
 *   FAKE_TERRAFORM_PLATFORM     the platform providers are installed for (default: this machine's, e.g. linux_amd64)
 *   FAKE_TERRAFORM_PROVIDER_CACHE  unpacked provider packages `providers mirror` copies from (the registry's stand-in)
 *   TF_CLI_CONFIG_FILE          CLI configuration whose provider_installation block `init` follows
 *   TF_DATA_DIR                 where `init` records installed providers (default: ./.terraform)
 *
 * One run, in the calling process (`src/fakeTerraform.ts` is the program that prints its outcome): `argv`
 * is the arguments after the program name; `-chdir` and relative paths in the variables above are taken
 * from `cwd` (TF_DATA_DIR's from the `-chdir` directory, as before); a step's `durationMs` is waited on the
 * global timers, so a world's fake timers reach it. Once `signal` aborts (a runner's kill), the run stops
 * at that wait and writes nothing more; what it returns then is no answer.
 */
export async function fakeTerraform(
  argv: readonly string[],
  givenEnv: NodeJS.ProcessEnv,
  cwd: string,
  signal?: AbortSignal,
): Promise<Outcome> {
  const env = pathsFrom(cwd, givenEnv);
  const cmd = parseArgs([...argv]);
  const dir = resolve(cwd, cmd.chdir ?? '.');
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
    case 'init': {
      const req = required(dir, s);
      if (!req.ok) return req.outcome;
      let methods: InstallMethod[] | null;
      if (cmd.pluginDirs.length)
        methods = cmd.pluginDirs.map((path) => ({
          kind: 'filesystem_mirror',
          path,
          include: [],
          exclude: [],
        }));
      else {
        const c = cliConfig(env);
        if (!c.ok) return c.outcome;
        methods = c.methods;
      }
      const fetched = fetchModules(
        s.modules,
        { exists: (p) => existsSync(resolve(dir, p)) },
        env.FAKE_TERRAFORM_NETWORK === '1',
      );
      if (fetched.errors)
        return {
          exitCode: 1,
          stdout: `\nInitializing the backend...\n${fetched.lines.join('\n')}\n`,
          stderr: fetched.errors,
        };
      const o = initOutcome({
        required: req.providers,
        methods,
        platform: platformOf(env),
        network: env.FAKE_TERRAFORM_NETWORK === '1',
        mirror: fsMirror(dir),
      });
      if (o.installed.length) recordInstalled(dataDir(dir, env), o.installed);
      return o;
    }
    case 'validate':
      return { exitCode: 0, stdout: 'Success! The configuration is valid.\n', stderr: '' };
    case 'providers mirror':
      return providersMirror(dir, s, env, cmd);
    case 'show': {
      if (!cmd.file) return { exitCode: 0, stdout: '{"format_version":"1.0"}\n', stderr: '' };
      const path = resolve(dir, cmd.file);
      return showOutcome(cmd.file, existsSync(path) ? readFileSync(path, 'utf8') : null, cmd.json);
    }
    case 'plan': {
      const req = required(dir, s);
      if (!req.ok) return req.outcome;
      const preflightError =
        pluginsProblem(req.providers, readInstalled(dataDir(dir, env)), platformOf(env)) ?? undefined;
      const { run, elapsedMs } = preflightError ? { run: 0, elapsedMs: 0 } : nextRun(dir, env, Date.now());
      const fake = readFakeState(dir, env);
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
        configDigest: configurationDigest(dir),
        preflightError,
        serial: fake.serial,
        ...(fake.appliedInstance !== undefined ? { appliedInstance: fake.appliedInstance } : {}),
        timestamp:
          env.FAKE_TERRAFORM_TIMESTAMP === 'now'
            ? new Date().toISOString().replace(/\.\d+Z$/, 'Z')
            : undefined,
      });
      if (o.sleepMs) await sleep(o.sleepMs, signal);
      // Killed while it took its time: a killed terraform writes no plan file.
      if (signal?.aborted) return o;
      if (o.planFile !== undefined && cmd.out) writeFileSync(resolve(dir, cmd.out), o.planFile);
      return o;
    }
    case 'apply': {
      if (!cmd.file)
        return fail(
          box('No saved plan file given', ['This fake applies only saved plans: terraform apply <planfile>']),
        );
      const path = resolve(dir, cmd.file);
      const o = applyOutcome({
        file: cmd.file,
        content: existsSync(path) ? readFileSync(path, 'utf8') : null,
        state: readFakeState(dir, env),
        mode: env.FAKE_TERRAFORM_APPLY,
        seed: s.seed,
      });
      if (o.nextState) writeFakeState(dir, env, o.nextState);
      return o;
    }
    default:
      return {
        exitCode: 1,
        stdout: '',
        stderr: `Terraform has no command named "${cmd.name}" (this fake knows plan, show, apply, version, init, validate, providers mirror).\n`,
      };
  }
}

const fail = (stderr: string): Outcome => ({ exitCode: 1, stdout: '', stderr });

/** `providers mirror <dir>`: packages from FAKE_TERRAFORM_PROVIDER_CACHE (the fake's "registry"). */
function providersMirror(
  dir: string,
  s: Scenario,
  env: NodeJS.ProcessEnv,
  cmd: { platforms: string[]; lockFile: boolean; dir: string | null },
): Outcome {
  if (!cmd.dir)
    return fail(
      box('No output directory specified', [
        'The providers mirror command requires an output directory as a command-line argument.',
      ]),
    );
  const req = required(dir, s);
  if (!req.ok) return req.outcome;
  const providers = cmd.lockFile ? req.providers : req.providers.map((p) => ({ ...p, locked: false }));
  const cacheDir = env.FAKE_TERRAFORM_PROVIDER_CACHE;
  const plan = planMirror({
    required: providers,
    platforms: cmd.platforms.length ? cmd.platforms : [platformOf(env)],
    cache: cacheDir ? readProviderCache(cacheDir) : null,
  });
  const out = resolve(dir, cmd.dir);
  for (const z of plan.zips) writeZip(join(out, z.path), z.pkg.files);
  if (!existsSync(out))
    return fail(
      plan.stderr +
        box('Failed to update indexes', [
          `Could not scan the output directory to get package metadata for the JSON indexes: cannot search ${cmd.dir}: lstat ${cmd.dir}: no such file or directory.`,
        ]),
    );
  writeIndexes(out, mirrorIndexes(readMirroredZips(out)));
  return { exitCode: plan.exitCode, stdout: plan.stdout, stderr: plan.stderr };
}

const stateFile = (dir: string, env: NodeJS.ProcessEnv) =>
  join(env.FAKE_TERRAFORM_STATE_DIR || join(dir, '.fake-terraform'), 'state.json');

/** The fake's state serial (0 before any apply) and the step instance applied last. */
function readFakeState(dir: string, env: NodeJS.ProcessEnv): FakeState {
  try {
    const s = JSON.parse(readFileSync(stateFile(dir, env), 'utf8')) as FakeState;
    if (Number.isInteger(s.serial)) return s;
  } catch {
    // No apply yet.
  }
  return { serial: 0 };
}

/** Written through a temporary file and rename, like the run counter. */
function writeFakeState(dir: string, env: NodeJS.ProcessEnv, state: FakeState): void {
  const file = stateFile(dir, env);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(`${file}.${process.pid}.tmp`, JSON.stringify(state));
  renameSync(`${file}.${process.pid}.tmp`, file);
}

const platformOf = (env: NodeJS.ProcessEnv) =>
  env.FAKE_TERRAFORM_PLATFORM || terraformPlatform(process.platform, process.arch);

const dataDir = (dir: string, env: NodeJS.ProcessEnv) => resolve(dir, env.TF_DATA_DIR || '.terraform');

/** The providers the working directory requires: its lock file's and the scenario's `providers`. */
function required(
  dir: string,
  s: Scenario,
): { ok: true; providers: RequiredProvider[] } | { ok: false; outcome: Outcome } {
  let text: string | null;
  try {
    text = readTextFile(join(dir, '.terraform.lock.hcl'), LOCK_FILE_MAX_CHARS);
  } catch (e) {
    return { ok: false, outcome: fail(box('Failed to read dependency lock file', [(e as Error).message])) };
  }
  if (text === null) return { ok: true, providers: requiredProviders([], s.providers) };
  const lock = parseLockFile(text);
  if (!lock.ok)
    return {
      ok: false,
      outcome: fail(box('Invalid dependency lock file', [`.terraform.lock.hcl ${lock.problem}`])),
    };
  return { ok: true, providers: requiredProviders(lock.providers, s.providers) };
}

/** The `provider_installation` methods of `TF_CLI_CONFIG_FILE`, null when there is no such file or block. */
function cliConfig(
  env: NodeJS.ProcessEnv,
): { ok: true; methods: InstallMethod[] | null } | { ok: false; outcome: Outcome } {
  const path = env.TF_CLI_CONFIG_FILE;
  if (!path) return { ok: true, methods: null };
  let text: string | null;
  try {
    text = readTextFile(path, 256 * 1024);
  } catch (e) {
    return { ok: false, outcome: fail(box('Failed to read CLI configuration', [(e as Error).message])) };
  }
  // Terraform reads the file only when it exists (a missing one is as good as none).
  if (text === null) return { ok: true, methods: null };
  const c = parseCliConfig(text);
  if (!c.ok) return { ok: false, outcome: fail(box('Invalid CLI configuration', [`${path} ${c.problem}`])) };
  return { ok: true, methods: c.methods };
}

/** Environment variables that name a file or directory, relative to the program's working directory. */
const CWD_PATHS = [
  'FAKE_TERRAFORM_SCENARIO',
  'FAKE_TERRAFORM_STATE_DIR',
  'FAKE_TERRAFORM_PROVIDER_CACHE',
  'TF_CLI_CONFIG_FILE',
] as const;

/**
 * `env` with its relative paths (`CWD_PATHS`) made absolute from `cwd`, as a process started in `cwd` opens
 * them. Unchanged when `cwd` is this process's own directory, so messages quote the paths as given.
 */
function pathsFrom(cwd: string, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (resolve(cwd) === process.cwd()) return env;
  const out = { ...env };
  for (const k of CWD_PATHS) {
    const v = out[k];
    if (v && !isAbsolute(v)) out[k] = resolve(cwd, v);
  }
  return out;
}

/** Waits `ms` on the global timers (a world's fake ones when installed); an abort ends the wait early. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((done) => {
    if (signal?.aborted) return done();
    const stop = () => {
      clearTimeout(timer);
      done();
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', stop);
      done();
    }, ms);
    signal?.addEventListener('abort', stop, { once: true });
  });
}
