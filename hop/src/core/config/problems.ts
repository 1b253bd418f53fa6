import type { z } from 'zod';
import { didYouMean } from './didYouMean.js';
import { keyPath, shown, valueAt } from './keyPath.js';
import { kindOf, objectKeys, schemasAt, unionOptions } from './schemaWalk.js';

/** The outcome of checking a parsed config file against its schema. */
export type SchemaCheck<T> = { ok: true; value: T } | { ok: false; problems: string[] };

type Issue = z.core.$ZodIssue & { input?: unknown };

/**
 * Checks parsed YAML against a program's schema; every problem is one line that names the full key
 * path (`listen.hop.port`), what was expected and the value found, and for an unknown key the known
 * one within edit distance 2. Where a union (hub `listen:`) cannot be told apart by zod, the option
 * the file's keys fit is the one reported on, not whichever zod tried first.
 */
export function checkConfig<S extends z.ZodType>(schema: S, raw: unknown): SchemaCheck<z.output<S>> {
  const r = schema.safeParse(raw ?? {}, { reportInput: true });
  if (r.success) return { ok: true, value: r.data };
  return { ok: false, problems: describe(schema, raw ?? {}, r.error.issues as Issue[], [], 0) };
}

function describe(
  root: z.ZodType,
  raw: unknown,
  issues: readonly Issue[],
  prefix: readonly PropertyKey[],
  depth: number,
): string[] {
  const out: string[] = [];
  for (const issue of issues) {
    const rel = issue.path as PropertyKey[];
    const options = unionOptions(schemasAt(root, rel)[0] ?? root);
    if (
      options.length > 0 &&
      depth < 8 &&
      (issue.code === 'unrecognized_keys' || issue.code === 'invalid_union')
    ) {
      out.push(...describeUnion(options, valueAt(raw, rel), [...prefix, ...rel], depth));
      continue;
    }
    out.push(...describeIssue(root, issue, prefix));
  }
  return [...new Set(out)];
}

/** Reports on the union option the value's keys fit best; none fits: names the forms it may take. */
function describeUnion(options: z.ZodType[], value: unknown, at: PropertyKey[], depth: number): string[] {
  let best: { option: z.ZodType; issues: Issue[]; misfit: number } | null = null;
  for (const option of options) {
    const r = option.safeParse(value, { reportInput: true });
    if (r.success) return [];
    const issues = r.error.issues as Issue[];
    const misfit = misfitOf(issues, value);
    if (!best || misfit < best.misfit || (misfit === best.misfit && issues.length < best.issues.length))
      best = { option, issues, misfit };
  }
  if (!best) return [];
  if (best.misfit >= 1) {
    const forms = options.map((o) =>
      kindOf(o) === 'object' ? `{ ${objectKeys(o).join(', ')} }` : kindOf(o),
    );
    return [`${keyPath(at)}: expected ${forms.join(' or ')}, found ${shown(value, at)}`];
  }
  return describe(best.option, value, best.issues, at, depth + 1);
}

/**
 * How badly a value misses an option, from 0 (its shape fits) to 1 (none of its keys is the option's,
 * or it is not even the right type): the share of its own keys the option does not know.
 */
function misfitOf(issues: readonly Issue[], value: unknown): number {
  if (issues.some((i) => i.path.length === 0 && i.code === 'invalid_type')) return 1;
  const unknown = issues
    .filter((i) => i.path.length === 0 && i.code === 'unrecognized_keys')
    .reduce((n, i) => n + (i.code === 'unrecognized_keys' ? i.keys.length : 0), 0);
  const own = value !== null && typeof value === 'object' ? Object.keys(value).length : 0;
  return own === 0 ? 0 : unknown / own;
}

function describeIssue(root: z.ZodType, issue: Issue, prefix: readonly PropertyKey[]): string[] {
  const rel = issue.path as PropertyKey[];
  const at = [...prefix, ...rel];
  const found = shown(issue.input, at);
  switch (issue.code) {
    case 'unrecognized_keys': {
      const known = schemasAt(root, rel).flatMap(objectKeys);
      return issue.keys.map((k) => {
        const near = didYouMean(k, known);
        const hint = near
          ? `did you mean ${keyPath([...at, near])}?`
          : `expected one of ${known.join(', ') || '(none)'}`;
        return `${keyPath([...at, k])}: unknown key; ${hint}`;
      });
    }
    case 'invalid_type':
      return issue.input === undefined
        ? [`${keyPath(at)}: required: expected ${article(issue.expected)}, found nothing`]
        : [`${keyPath(at)}: expected ${article(issue.expected)}, found ${found}`];
    case 'invalid_value':
      return [
        `${keyPath(at)}: expected one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}, found ${found}`,
      ];
    case 'too_small':
    case 'too_big':
      return [`${keyPath(at)}: expected ${bound(issue)}, found ${found}`];
    case 'invalid_format':
      if (/^Invalid/.test(issue.message))
        return [`${keyPath(at)}: expected a valid ${issue.format}, found ${found}`];
      return [`${keyPath(at)}: ${expectation(issue.message)}, found ${found}`];
    default: {
      // One over a whole object (say, "give exactly one of token, tokenFile, tokenEnv") names its keys.
      const tail = issue.input !== null && typeof issue.input === 'object' ? '' : `, found ${found}`;
      return [`${keyPath(at)}: ${expectation(issue.message)}${tail}`];
    }
  }
}

/**
 * A schema's own message as an expectation: the schemas word them as what is expected ("an IP
 * address or CIDR, …", "must be an environment variable name"); anything else is kept as written.
 */
function expectation(message: string): string {
  if (/^(a|an|one) /i.test(message)) return `expected ${message}`;
  if (/^must be /.test(message)) return `expected ${message.slice('must be '.length)}`;
  return message;
}

const article = (t: string) => (/^[aeiou]/.test(t) ? `an ${t}` : `a ${t}`);

function bound(issue: z.core.$ZodIssueTooSmall | z.core.$ZodIssueTooBig): string {
  const small = issue.code === 'too_small';
  const n = Number(small ? issue.minimum : issue.maximum);
  const op = small ? (issue.inclusive === false ? '>' : '≥') : issue.inclusive === false ? '<' : '≤';
  if (issue.origin === 'string') return `a string of ${small ? 'at least' : 'at most'} ${n} characters`;
  if (issue.origin === 'array' || issue.origin === 'set')
    return `a list of ${small ? 'at least' : 'at most'} ${n} item${n === 1 ? '' : 's'}`;
  return `a number ${op} ${n}`;
}
