import { type AgentConfig, loadConfig } from '../config.js';

/**
 * Loads the config for a verb, or prints every problem and sets exit code 2. `filesMustExist: false`
 * (for `init`, which runs before the hub key and tokens are in place) skips the file checks.
 */
export function configOrExit(path: string, filesMustExist = true): AgentConfig | null {
  const r = loadConfig(path, { checkFiles: filesMustExist });
  if (r.ok) return r.config;
  process.stderr.write(
    `${path}: ${r.problems.length} problem(s):\n${r.problems.map((p) => `  - ${p}`).join('\n')}\n`,
  );
  process.exitCode = 2;
  return null;
}
