import { open, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { type ModuleCall, moduleCalls } from '../../core/plan/moduleCalls.js';
import { type DeclaredVariable, declaredVariables } from '../../core/redact/declaredVariables.js';

const MODULE_FILE = /\.tf(?:\.json)?$/;

async function readUpTo(path: string, maxBytes: number): Promise<string | undefined> {
  try {
    const fh = await open(path, 'r');
    try {
      const buf = Buffer.alloc(maxBytes);
      const { bytesRead } = await fh.read(buf, 0, maxBytes, 0);
      return buf.subarray(0, bytesRead).toString('utf8');
    } finally {
      await fh.close();
    }
  } catch {
    return undefined;
  }
}

/**
 * The variables the root module in `dir` declares (`*.tf`, `*.tf.json` directly in it), each file read
 * up to `maxBytes`. A directory that cannot be read declares nothing.
 */
export async function readModuleVariables(dir: string, maxBytes: number): Promise<DeclaredVariable[]> {
  const names = await readdir(dir).then(
    (ns) => ns.filter((n) => MODULE_FILE.test(n)).sort(),
    () => [] as string[],
  );
  const out: DeclaredVariable[] = [];
  for (const n of names) {
    const text = await readUpTo(join(dir, n), maxBytes);
    if (text !== undefined) out.push(...declaredVariables(n, text));
  }
  return out;
}

/** The `module` calls of the root module in `dir` (`*.tf` directly in it), each file read up to `maxBytes`. */
export async function readModuleCalls(dir: string, maxBytes: number): Promise<ModuleCall[]> {
  const names = await readdir(dir).then(
    (ns) => ns.filter((n) => n.endsWith('.tf')).sort(),
    () => [] as string[],
  );
  const out: ModuleCall[] = [];
  for (const n of names) {
    const text = await readUpTo(join(dir, n), maxBytes);
    if (text !== undefined) out.push(...moduleCalls(text));
  }
  return out;
}
