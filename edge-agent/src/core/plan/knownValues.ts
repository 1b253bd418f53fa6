import type { VarFileText } from '../../ports/VarFiles.js';
import { MIN_SECRET_LENGTH, type SecretValue } from '../redact/scan.js';
import { envVarValues, varFileValues } from '../redact/varFileValues.js';

/** Lines of a multi-line value this long or longer are searched for on their own too. */
const MIN_LINE_LENGTH = 6;

function push(out: SecretValue[], value: string, source: string): void {
  if (value.length < MIN_SECRET_LENGTH) return;
  out.push({ value, source });
  if (!value.includes('\n')) return;
  for (const line of value.split('\n')) {
    const t = line.trim();
    if (t.length >= MIN_LINE_LENGTH && t !== value) out.push({ value: t, source });
  }
}

/**
 * Every value the agent itself hands to the tool, which must not leave the site whatever the tool
 * prints: `TF_VAR_*` from its own environment, the environment variables the config sets for the
 * component (all of them: credentials travel that way), and the contents of the variable definitions
 * files the tool reads.
 */
export function knownValues(opts: {
  baseEnv: Readonly<Record<string, string | undefined>>;
  configuredEnv: Readonly<Record<string, string>>;
  varFiles: readonly VarFileText[];
}): SecretValue[] {
  const out: SecretValue[] = [];
  for (const [k, v] of Object.entries(opts.baseEnv)) {
    if (k.startsWith('TF_VAR_') && v !== undefined) for (const x of envVarValues(v)) push(out, x, 'env');
  }
  for (const v of Object.values(opts.configuredEnv)) for (const x of envVarValues(v)) push(out, x, 'env');
  for (const f of opts.varFiles) for (const x of varFileValues(f.path, f.text)) push(out, x, 'var-file');
  return out;
}
