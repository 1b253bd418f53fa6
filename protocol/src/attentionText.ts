/** The words the grouped attention rows share (`attentionGroups.ts`, `attentionCustody.ts`). */

export const n = (x: number) => x.toLocaleString('en-US');
export const plural = (x: number, one: string, many = `${one}s`) => `${n(x)} ${x === 1 ? one : many}`;

/** A span as the rows say it: `40 s`, `14 min`, `3 h`, `2 d`. */
export function forHow(ms: number): string {
  if (ms < 60_000) return `${Math.max(0, Math.round(ms / 1000))} s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`;
  if (ms < 86_400_000) return `${Math.round(ms / 3_600_000)} h`;
  return `${Math.round(ms / 86_400_000)} d`;
}
