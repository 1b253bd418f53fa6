import type { StateLock } from '@driftline/protocol';
import type { SecretRule } from '../redact/rules.js';
import { type SecretValue, scanForSecrets } from '../redact/scan.js';

/**
 * Terraform's "Lock Info" block in a state-lock error (`LockInfo.String()`,
 * internal/states/statemgr/locker.go; OpenTofu alike): the heading, then one line per field,
 *
 *     Lock Info:
 *       ID:        5ba24658-9d93-e5d5-231e-bf92254a663e
 *       Path:      terraform.tfstate
 *       …
 *
 * Its values are lock metadata, not configuration: the line allow-list (`excerptLines.ts`) keeps these
 * lines only right under the heading, only these seven names, each once, and values of at most
 * `MAX_LOCK_VALUE` printable ASCII characters. Each kept value is then scanned alone (`scanLockLines`),
 * so one that looks like a secret is withheld and the others stay (docs/decisions/555-stuck-lock-stays-stuck.md).
 */
export const LOCK_FIELDS = ['ID', 'Path', 'Operation', 'Who', 'Version', 'Created', 'Info'] as const;
export type LockField = (typeof LOCK_FIELDS)[number];

export const LOCK_HEADING = 'Lock Info:';
/** Longest value kept. */
export const MAX_LOCK_VALUE = 200;

// On a trimmed line: a name, its colon, Terraform's padding and a value. One way to match any line:
// no nested or overlapping quantifiers.
export const LOCK_FIELD_LINE =
  /^(ID|Path|Operation|Who|Version|Created|Info):(?: {1,16}([\x21-\x7E][\x20-\x7E]{0,199}))?$/;

export interface LockLine {
  field: LockField;
  /** '' for a field Terraform printed empty (`Info:` usually is). */
  value: string;
}

/**
 * A reader of a text's lines in order: for a (trimmed) line of a Lock Info block, its field and value;
 * undefined for any other line. The block is the lines right under `Lock Info:` while each is a field
 * not seen yet in it.
 */
export function lockBlockReader(): (trimmed: string) => LockLine | undefined {
  let open = false;
  const seen = new Set<string>();
  return (line) => {
    if (line === LOCK_HEADING) {
      open = true;
      seen.clear();
      return undefined;
    }
    if (!open) return undefined;
    const m = LOCK_FIELD_LINE.exec(line);
    if (!m || seen.has(m[1] as string)) {
      open = false;
      return undefined;
    }
    seen.add(m[1] as string);
    return { field: m[1] as LockField, value: m[2] ?? '' };
  };
}

/** A field line as Terraform prints it (the name padded to 11 columns). */
export function lockLineText(l: LockLine): string {
  return `${`${l.field}:`.padEnd(11)}${l.value}`.trimEnd();
}

const KEYS: Record<LockField, keyof StateLock> = {
  ID: 'id',
  Path: 'path',
  Operation: 'operation',
  Who: 'who',
  Version: 'version',
  Created: 'created',
  Info: 'info',
};

export interface ScannedLock {
  /** The lines, each lock value that hit a scan rule replaced by a note naming the rule. */
  lines: string[];
  /** How many of `lines` are lock lines (kept apart from the excerpt's line count). */
  lockLines: number;
  /** The first block's fields that passed the scan; undefined without an ID (nothing to unlock by). */
  lock?: Pick<StateLock, 'id' | 'path' | 'operation' | 'who' | 'version' | 'created' | 'info'>;
  /** The rules that withheld a field, for the local log. */
  withheld: string[];
}

/** The allow-listed excerpt lines with each Lock Info value scanned alone, and the lock as data. */
export function scanLockLines(
  lines: readonly string[],
  secrets: readonly SecretValue[],
  rules: readonly SecretRule[],
): ScannedLock {
  const read = lockBlockReader();
  const out: string[] = [];
  const fields: Partial<Record<keyof StateLock, string>> = {};
  const withheld: string[] = [];
  let lockLines = 0;
  let blocks = 0;
  for (const line of lines) {
    if (line.trim() === LOCK_HEADING) blocks++;
    const l = read(line.trim());
    if (!l) {
      out.push(line);
      continue;
    }
    lockLines++;
    const indent = line.slice(0, line.length - line.trimStart().length);
    const scan = l.value === '' ? { ok: true as const } : scanForSecrets(l.value, secrets, rules);
    if (!scan.ok) {
      withheld.push(scan.hit);
      out.push(
        `${indent}${lockLineText({ field: l.field, value: `(withheld: it matched the redaction rule ${scan.hit})` })}`,
      );
      continue;
    }
    out.push(`${indent}${lockLineText(l)}`);
    // The lock is the first block's: fields of two errors are never mixed.
    if (l.value !== '' && blocks === 1) fields[KEYS[l.field]] = l.value;
  }
  const { id, ...rest } = fields;
  return { lines: out, lockLines, withheld, ...(id ? { lock: { id, ...rest } } : {}) };
}
