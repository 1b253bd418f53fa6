import type { PlanSummary } from '@driftline/protocol';

/** A readable rendering of a summary for a terminal: one headline, then one line per resource. */
export function renderSummary(s: PlanSummary): string {
  const lines: string[] = [];
  const c = s.counts;
  const counts = c
    ? `  add ${c.add}, change ${c.change}, destroy ${c.destroy} (replace ${c.replace}, import ${c.import}, drift ${c.drift})`
    : '';
  lines.push(`${s.component}/${s.environment}: ${s.status}${s.reason ? ` (${s.reason})` : ''}${counts}`);
  const meta = [
    s.terraformVersion && `terraform ${s.terraformVersion}`,
    s.formatVersion && `format ${s.formatVersion}`,
    s.git &&
      `git ${s.git.commit.slice(0, 12)}${s.git.branch ? ` on ${s.git.branch}` : ''}${s.git.dirty ? ' (dirty)' : ''}`,
    s.planHash && `planHash ${s.planHash.slice(0, 16)}…`,
  ].filter(Boolean);
  if (meta.length) lines.push(`  ${meta.join(', ')}`);
  const rows = (s.resources ?? []).map((r) => [
    r.drift ? `drift:${r.actions.join('/')}` : r.actions.join('/'),
    r.address,
    [
      r.previousAddress && `moved from ${r.previousAddress}`,
      r.importing && 'import',
      r.changedAttributes.join(', '),
    ]
      .filter(Boolean)
      .join('; '),
  ]);
  if (rows.length) {
    const w0 = Math.max(6, ...rows.map((r) => (r[0] ?? '').length));
    const w1 = Math.max(7, ...rows.map((r) => (r[1] ?? '').length));
    lines.push('', `  ${'ACTION'.padEnd(w0)}  ${'ADDRESS'.padEnd(w1)}  CHANGED`);
    for (const [a, b, d] of rows)
      lines.push(`  ${(a ?? '').padEnd(w0)}  ${(b ?? '').padEnd(w1)}  ${d}`.trimEnd());
  }
  if (s.outputChanges?.length) lines.push('', `  outputs changed: ${s.outputChanges.join(', ')}`);
  if (s.errorExcerpt) lines.push('', ...s.errorExcerpt.split('\n').map((l) => `  | ${l}`));
  return `${lines.join('\n')}\n`;
}
