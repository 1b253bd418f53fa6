import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { DEFAULT_SCENARIO, parseScenario, type Scenario } from '../../core/terraform/scenario.js';

const NAMES = ['fake-terraform.yaml', 'fake-terraform.yml', 'fake-terraform.json'];

/** The scenario from `FAKE_TERRAFORM_SCENARIO`, else `fake-terraform.{yaml,yml,json}` in `dir`, else the default. */
export function loadScenario(
  dir: string,
  env: NodeJS.ProcessEnv,
): { ok: true; scenario: Scenario; path: string | null } | { ok: false; problems: string[]; path: string } {
  const path = env.FAKE_TERRAFORM_SCENARIO || NAMES.map((n) => join(dir, n)).find((p) => existsSync(p));
  if (!path) return { ok: true, scenario: DEFAULT_SCENARIO, path: null };
  let raw: unknown;
  try {
    raw = parseYaml(readFileSync(path, 'utf8')); // YAML is a superset of JSON
  } catch (e) {
    return { ok: false, path, problems: [`cannot read it: ${(e as Error).message}`] };
  }
  const r = parseScenario(raw);
  return r.ok ? { ok: true, scenario: r.scenario, path } : { ok: false, path, problems: r.problems };
}

interface RunState {
  runs: number;
  firstRunAt: number;
}

/**
 * Counts plan runs per working directory in `.fake-terraform/runs.json` (like `.terraform/`), or in
 * `FAKE_TERRAFORM_STATE_DIR`. Written through a temporary file and rename, so a killed run leaves
 * the old count, never a torn file.
 */
export function nextRun(
  dir: string,
  env: NodeJS.ProcessEnv,
  now: number,
): { run: number; elapsedMs: number } {
  const stateDir = env.FAKE_TERRAFORM_STATE_DIR || join(dir, '.fake-terraform');
  const file = join(stateDir, 'runs.json');
  let state: RunState = { runs: 0, firstRunAt: now };
  try {
    const s = JSON.parse(readFileSync(file, 'utf8')) as RunState;
    if (Number.isInteger(s.runs) && Number.isFinite(s.firstRunAt)) state = s;
  } catch {
    // No file yet (first run) or unreadable: start counting again.
  }
  mkdirSync(stateDir, { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify({ runs: state.runs + 1, firstRunAt: state.firstRunAt }));
  renameSync(tmp, file);
  return { run: state.runs, elapsedMs: now - state.firstRunAt };
}
