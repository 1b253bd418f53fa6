import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { type AgentConfig, loadConfig, parseConfig } from '../config.js';

/**
 * Loads the config for a verb, or prints every problem and sets exit code 2. `filesMustExist: false`
 * (for `init`, which runs before the hub key and tokens are in place) skips the file checks.
 */
export function configOrExit(path: string, filesMustExist = true): AgentConfig | null {
  let r: ReturnType<typeof loadConfig>;
  if (filesMustExist) {
    r = loadConfig(path);
  } else {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (e) {
      r = { ok: false, problems: [`(file): cannot read: ${(e as Error).message}`] };
      text = '';
    }
    r = text ? parseConfig(text, dirname(resolve(path))) : r!;
  }
  if (r.ok) return r.config;
  process.stderr.write(
    `${path}: ${r.problems.length} problem(s):\n${r.problems.map((p) => `  - ${p}`).join('\n')}\n`,
  );
  process.exitCode = 2;
  return null;
}
