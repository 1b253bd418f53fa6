/** A saved plan file copied out of a run's scratch space, not yet kept under a run id. */
export interface StashedPlan {
  path: string;
  /** sha256 of the file's bytes, hex. */
  sha256: string;
}

/** What the agent knows of a kept plan file besides its bytes. */
export interface KeptPlanMeta {
  runId: string;
  environment: string;
  component: string;
  /** The cell's ref key (absent for the component's default ref). */
  cellRef?: string;
  /** The ref the run planned (`main` for a component planned from a working directory). */
  ref: string;
  /** The commit the run planned, when known. */
  commit?: string;
}

/** A kept plan as it is on disk now: its sha256 is of the bytes read now, never of a record. */
export interface KeptPlan {
  path: string;
  sha256: string;
  meta: KeptPlanMeta;
}

/**
 * The saved plan files of apply-enabled cells (`<dataDir>/plans/<runId>.tfplan`, mode 0600 in a 0700
 * directory). They hold every value of the plan in clear and never leave the site.
 * Adapters: `FsPlanFiles`, `MemoryPlanFiles`; both pass `runPlanFilesContract` (test/planFilesContract.ts).
 */
export interface PlanFiles {
  /** Copies a run's saved plan out of scratch space before it is disposed. */
  stash(scratchFile: string): Promise<StashedPlan>;
  /** Keeps a stashed plan as `meta.runId`'s, and deletes the cell's older plans beyond the latest few. */
  adopt(stashed: StashedPlan, meta: KeptPlanMeta): Promise<void>;
  /** Deletes a stashed plan nobody will approve (an unchanged plan records no run of its own). */
  discard(stashed: StashedPlan): Promise<void>;
  /** The kept plan of `runId`, hashed now; undefined when there is none. */
  open(runId: string): Promise<KeptPlan | undefined>;
  /** Deletes the kept plan of `runId` (after its apply: a saved plan applies once). */
  remove(runId: string): Promise<void>;
}
