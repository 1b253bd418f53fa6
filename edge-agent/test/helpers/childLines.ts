import type { Readable } from 'node:stream';

/**
 * Waits on a child's output: `next(re, n)` resolves once `n` lines matching `re` have been written (those
 * already written count), and rejects, naming what it waited for, if the stream ends first.
 */
export function childLines(stream: Readable): {
  next(re: RegExp, n?: number): Promise<string[]>;
  text(): string;
} {
  let buffered = '';
  let all = '';
  const lines: string[] = [];
  let ended = false;
  const waiters: Array<{
    re: RegExp;
    n: number;
    resolve: (l: string[]) => void;
    reject: (e: Error) => void;
  }> = [];
  const settle = () => {
    for (const w of [...waiters]) {
      const hits = lines.filter((l) => w.re.test(l));
      if (hits.length >= w.n) w.resolve(hits);
      else if (ended) w.reject(new Error(`the output ended before ${w.n} line(s) matching ${w.re}`));
      else continue;
      waiters.splice(waiters.indexOf(w), 1);
    }
  };
  stream.on('data', (d: Buffer) => {
    const s = d.toString();
    all += s;
    buffered += s;
    const parts = buffered.split('\n');
    buffered = parts.pop() ?? '';
    lines.push(...parts);
    settle();
  });
  stream.on('end', () => {
    if (buffered) lines.push(buffered);
    buffered = '';
    ended = true;
    settle();
  });
  return {
    next: (re, n = 1) =>
      new Promise((resolve, reject) => {
        waiters.push({ re, n, resolve, reject });
        settle();
      }),
    text: () => all,
  };
}
