import { readFileSync, statSync } from 'node:fs';

export interface TokenFileOptions {
  /** The token read at start (the caller already checked the file); read now when absent. */
  initial?: string;
  /** Looks at the file at most this often, when the token is used, ms. Default 2000. */
  checkEveryMs?: number;
  now?: () => number;
  /** Called once per change of the token (not per read): log it. */
  onChange?: (path: string) => void;
  /** Called once per distinct problem (an empty or unreadable file): the token before it is kept. */
  onProblem?: (path: string, problem: string) => void;
}

/**
 * A bearer token kept in a file and read again when the file changes (its mtime, size or inode), so a
 * replaced token file (`hub peer rotate`, `relay token add`) takes effect without a restart. The file is
 * looked at only when the token is used, at most once per `checkEveryMs`: no timer, no watcher.
 * An empty or unreadable file keeps the token in use (a rotation writes the new file in one go; an
 * editor that truncates first would otherwise cut the link for a moment).
 */
export function tokenFromFile(path: string, opts: TokenFileOptions = {}): () => string {
  const now = opts.now ?? Date.now;
  const every = opts.checkEveryMs ?? 2000;
  const stamp = () => {
    const s = statSync(path);
    return `${s.ino}:${s.size}:${s.mtimeMs}`;
  };
  let token = opts.initial ?? readFileSync(path, 'utf8').trim();
  let seen = (() => {
    try {
      return stamp();
    } catch {
      return '';
    }
  })();
  let checkedAt = now();
  let problem = '';
  const report = (p: string) => {
    if (p !== problem && p) opts.onProblem?.(path, p);
    problem = p;
  };
  return () => {
    if (now() - checkedAt < every) return token;
    checkedAt = now();
    try {
      const s = stamp();
      if (s === seen) return token;
      const next = readFileSync(path, 'utf8').trim();
      if (!next) {
        report('the file is empty; the token read before is kept');
        return token;
      }
      seen = s;
      report('');
      if (next !== token) {
        token = next;
        opts.onChange?.(path);
      }
    } catch (e) {
      report(`${(e as Error).message}; the token read before is kept`);
    }
    return token;
  };
}
