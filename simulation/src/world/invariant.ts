/**
 * One thing a world run must show at its end (`runWorld.ts`), held or not, with what was seen. The fault
 * modules (`clockFaults.ts`, `diskFaults.ts`) judge their own, so it lives apart from the run.
 */
export interface Invariant {
  name: string;
  held: boolean;
  detail: string;
}
