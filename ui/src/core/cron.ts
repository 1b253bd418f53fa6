/**
 * The next time a five-field cron expression (`minute hour day-of-month month day-of-week`, UTC) fires,
 * for the contact windows agents declare. Supports `*`, numbers, ranges, lists and steps (`*\/90` steps
 * within the field, as cron does). Anything else is free text: null, and the dashboard shows it as written.
 */
const FIELDS: ReadonlyArray<[min: number, max: number]> = [
  [0, 59],
  [0, 23],
  [1, 31],
  [1, 12],
  [0, 7],
];

function parseField(text: string, [min, max]: [number, number]): Set<number> | null {
  const out = new Set<number>();
  for (const part of text.split(',')) {
    const m = /^(\*|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/.exec(part);
    if (!m) return null;
    const step = m[4] ? Number(m[4]) : 1;
    let lo = min;
    let hi = max;
    if (m[2] !== undefined) {
      lo = Number(m[2]);
      hi = m[3] !== undefined ? Number(m[3]) : m[4] ? max : lo;
    }
    if (step < 1 || lo < min || hi > max || lo > hi) return null;
    for (let v = lo; v <= hi; v += step) out.add(v);
  }
  return out;
}

/** The parsed fields, or null when `expr` is not a five-field cron expression. */
export function parseCron(expr: string): Set<number>[] | null {
  const parts = expr.trim().split(/\s+/);
  if (parts.length !== 5) return null;
  const fields = parts.map((p, i) => parseField(p, FIELDS[i]!));
  if (fields.some((f) => f === null)) return null;
  const dow = fields[4]!;
  if (dow.has(7)) dow.add(0);
  return fields as Set<number>[];
}

/** The first minute after `fromMs` that `expr` matches, within `horizonDays`; null if none or not cron. */
export function nextCronTime(expr: string, fromMs: number, horizonDays = 35): number | null {
  const f = parseCron(expr);
  if (!f) return null;
  const [mins, hours, doms, months, dows] = f as [
    Set<number>,
    Set<number>,
    Set<number>,
    Set<number>,
    Set<number>,
  ];
  const anyDom = doms.size === 31;
  const anyDow = dows.size >= 7;
  const start = Math.floor(fromMs / 60_000) * 60_000 + 60_000;
  const end = start + horizonDays * 86_400_000;
  for (let t = start; t < end; ) {
    const d = new Date(t);
    const dayOk =
      anyDom && anyDow
        ? true
        : anyDom
          ? dows.has(d.getUTCDay())
          : anyDow
            ? doms.has(d.getUTCDate())
            : doms.has(d.getUTCDate()) || dows.has(d.getUTCDay());
    if (!months.has(d.getUTCMonth() + 1) || !dayOk) {
      t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
      continue;
    }
    if (!hours.has(d.getUTCHours())) {
      t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCHours() + 1);
      continue;
    }
    if (mins.has(d.getUTCMinutes())) return t;
    t += 60_000;
  }
  return null;
}
