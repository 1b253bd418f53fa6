import { countOf } from './plural.js';

/**
 * A run's failing checks in words: `1 failing check: check.health`; the count alone when the hub did not
 * name them (a hub from before `failingChecks`); empty when none fails.
 */
export function failingChecksText(failed: number | undefined, names: readonly string[] | undefined): string {
  if (!failed) return '';
  const head = countOf(failed, 'failing check');
  if (!names?.length) return head;
  const more = failed > names.length ? ` and ${failed - names.length} more` : '';
  return `${head}: ${names.join(', ')}${more}`;
}
