/**
 * A small cron matcher for contact-plan windows: five fields (minute hour day-of-month month
 * day-of-week), each `*`, a number, `a-b`, a list `a,b`, or a step `*\/n` / `a-b/n`; evaluated in UTC.
 * Day-of-month and day-of-week both have to match (simpler than Vixie cron's "either", and stated).
 */
export interface CronSpec {
  fields: Set<number>[];
}

const RANGES: [number, number][] = [
  [0, 59],
  [0, 23],
  [1, 31],
  [1, 12],
  [0, 6],
];
const NAMES = ['minute', 'hour', 'day-of-month', 'month', 'day-of-week'];

export function parseCron(expr: string): { ok: true; value: CronSpec } | { ok: false; error: string } {
  const parts = expr.trim().split(/\s+/);
  if (parts.length !== 5) return { ok: false, error: `cron '${expr}' needs 5 fields, has ${parts.length}` };
  const fields: Set<number>[] = [];
  for (let i = 0; i < 5; i++) {
    const [lo, hi] = RANGES[i] as [number, number];
    const set = new Set<number>();
    for (const item of (parts[i] as string).split(',')) {
      const m = /^(\*|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/.exec(item);
      if (!m) return { ok: false, error: `cron ${NAMES[i]} field '${item}' is not *, n, a-b, a,b or */n` };
      const from = m[1] === '*' ? lo : Number(m[2]);
      const to = m[1] === '*' ? hi : m[3] !== undefined ? Number(m[3]) : m[4] ? hi : from;
      const step = m[4] ? Number(m[4]) : 1;
      if (from < lo || to > hi || from > to || step < 1) {
        return { ok: false, error: `cron ${NAMES[i]} field '${item}' is outside ${lo}-${hi}` };
      }
      for (let v = from; v <= to; v += step) set.add(v);
    }
    fields.push(set);
  }
  return { ok: true, value: { fields } };
}

/** true when the minute starting at `ms` (UTC) matches. */
export function cronMatches(spec: CronSpec, ms: number): boolean {
  const d = new Date(ms);
  const v = [d.getUTCMinutes(), d.getUTCHours(), d.getUTCDate(), d.getUTCMonth() + 1, d.getUTCDay()];
  return spec.fields.every((f, i) => f.has(v[i] as number));
}
