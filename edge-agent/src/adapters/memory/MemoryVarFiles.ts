import { basename, dirname, isAbsolute, join } from 'node:path';
import type { VarFiles, VarFileText } from '../../ports/VarFiles.js';

const AUTOLOADED = /^(?:terraform\.tfvars(?:\.json)?|.+\.auto\.tfvars(?:\.json)?)$/;

/**
 * Variable definitions files in memory, by absolute path, for tests of what the runner scans: the same
 * rules as `FsVarFiles` (both pass `runVarFilesContract`) — the passed files (relative to `dir`), then
 * the auto-loaded ones directly in `dir` by name, each once, missing ones skipped, each cut to
 * `maxBytes` bytes of its UTF-8.
 */
export class MemoryVarFiles implements VarFiles {
  private readonly files = new Map<string, string>();

  /** Puts (or replaces) the file at the absolute `path`. */
  write(path: string, text: string): void {
    if (!isAbsolute(path)) throw new Error(`not an absolute path: ${path}`);
    this.files.set(join(path), text);
  }

  async read(dir: string, passed: readonly string[], maxBytes: number): Promise<VarFileText[]> {
    const here = join(dir);
    const auto = [...this.files.keys()]
      .filter((p) => dirname(p) === here && AUTOLOADED.test(basename(p)))
      .map((p) => basename(p))
      .sort();
    const paths = [
      ...new Set([
        ...passed.map((p) => (isAbsolute(p) ? p : join(dir, p))),
        ...auto.map((n) => join(dir, n)),
      ]),
    ];
    const out: VarFileText[] = [];
    for (const path of paths) {
      const text = this.files.get(join(path));
      if (text === undefined) continue;
      out.push({ path, text: Buffer.from(text, 'utf8').subarray(0, maxBytes).toString('utf8') });
    }
    return out;
  }
}
