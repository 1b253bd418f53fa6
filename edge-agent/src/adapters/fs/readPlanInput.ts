import { open, stat } from 'node:fs/promises';

export type ReadResult = { ok: true; text: string } | { ok: false; message: string };

const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;

function tooLarge(what: string, max: number): ReadResult {
  return {
    ok: false,
    message: `${what} is larger than the ${mib(max)} limit; refusing to read it (raise limits.maxPlanBytes or --max-bytes if it really is a plan)`,
  };
}

/**
 * Reads plan JSON from a file or `-` (stdin), refusing anything over `maxBytes` before holding it in
 * memory: a file by its size, stdin by counting as it arrives.
 */
export async function readPlanInput(
  source: string,
  maxBytes: number,
  stdin: NodeJS.ReadableStream = process.stdin,
): Promise<ReadResult> {
  if (source === '-') {
    const chunks: Buffer[] = [];
    let total = 0;
    for await (const chunk of stdin) {
      const b = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
      total += b.length;
      if (total > maxBytes) return tooLarge('standard input', maxBytes);
      chunks.push(b);
    }
    return { ok: true, text: Buffer.concat(chunks).toString('utf8') };
  }
  try {
    const s = await stat(source);
    if (!s.isFile()) return { ok: false, message: `"${source}" is not a file` };
    if (s.size > maxBytes) return tooLarge(`"${source}" (${mib(s.size)})`, maxBytes);
    const fh = await open(source, 'r');
    try {
      return { ok: true, text: await fh.readFile('utf8') };
    } finally {
      await fh.close();
    }
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return {
      ok: false,
      message: `cannot read "${source}": ${code === 'ENOENT' ? 'no such file' : (code ?? String(e))}`,
    };
  }
}
