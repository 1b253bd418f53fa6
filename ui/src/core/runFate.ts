/**
 * The newer run that took this run's place in its cell, or null: a later run of the same cell and ref
 * whose plan differs (an unchanged re-plan only confirms the plan, which stays approvable). Its saved plan
 * file is what an approval would now have to name; the agent refuses an approval of an older one.
 */
export function supersededBy(
  run: { runId: string; ref?: string | null | undefined },
  later: readonly { runId: string; ref?: string | null | undefined; unchanged: boolean }[],
): string | null {
  let newest: string | null = null;
  for (const r of later) {
    if (r.runId <= run.runId || r.unchanged || (r.ref ?? null) !== (run.ref ?? null)) continue;
    if (newest === null || r.runId > newest) newest = r.runId;
  }
  return newest;
}
