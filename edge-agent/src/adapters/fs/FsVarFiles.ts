import { open, readdir } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import type { VarFiles, VarFileText } from '../../ports/VarFiles.js';

const AUTOLOADED = /^(?:terraform\.tfvars(?:\.json)?|.+\.auto\.tfvars(?:\.json)?)$/;

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

/** `VarFiles` over the file system: the passed files, then the auto-loaded ones in `dir`. */
export class FsVarFiles implements VarFiles {
  async read(dir: string, passed: readonly string[], maxBytes: number): Promise<VarFileText[]> {
    const auto = await readdir(dir).then(
      (names) => names.filter((n) => AUTOLOADED.test(n)).sort(),
      () => [] as string[],
    );
    const paths = [
      ...new Set([
        ...passed.map((p) => (isAbsolute(p) ? p : join(dir, p))),
        ...auto.map((n) => join(dir, n)),
      ]),
    ];
    const out: VarFileText[] = [];
    for (const path of paths) {
      const text = await readUpTo(path, maxBytes);
      if (text !== undefined) out.push({ path, text });
    }
    return out;
  }
}
