// ESC [ … letter: terminal colour codes (Terraform without -no-color, wrappers).
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*[A-Za-z]`, 'g');

/** The last few meaningful lines of a tool's error output, without colour codes, at most `max` characters. */
export function errorExcerpt(stderr: string, max = 1000, lines = 12): string | undefined {
  const kept = stderr
    .replace(ANSI, '')
    .split(/\r?\n/)
    .map((l) => l.replace(/[│╷╵]/g, '').trimEnd())
    .filter((l) => l.trim() !== '')
    .slice(-lines)
    .join('\n');
  if (kept === '') return undefined;
  return kept.length > max ? kept.slice(kept.length - max) : kept;
}

/** Terraform's and OpenTofu's state-lock failure (`Error acquiring the state lock`). */
export function isLockError(stderr: string): boolean {
  return /Error acquiring the state lock|Error locking state/i.test(stderr);
}
