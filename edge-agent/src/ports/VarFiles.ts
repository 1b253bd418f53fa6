/** One variable definitions file Terraform will read for a run. */
export interface VarFileText {
  path: string;
  text: string;
}

/**
 * The variable definitions files a plan in `dir` reads: the `-var-file`s the agent passes (relative to
 * `dir`), and those Terraform loads by itself (`terraform.tfvars`, `terraform.tfvars.json`,
 * `*.auto.tfvars`, `*.auto.tfvars.json`). Their values must not leave the site, so the runner
 * scans error output against them. Files that do not exist are skipped; each is read up to `maxBytes`.
 * Adapters: `FsVarFiles`, `MemoryVarFiles`; both pass `runVarFilesContract` (test/varFilesContract.ts).
 */
export interface VarFiles {
  read(dir: string, passed: readonly string[], maxBytes: number): Promise<VarFileText[]>;
}
