/**
 * What core reads of the agent's configuration, declared by core so that it does not depend on the YAML
 * schema (`src/configSchema.ts`, `src/configComponent.ts`): the parsed config satisfies these types as it
 * is, with every default filled in and every relative path already resolved from the config file's folder
 * (docs/architecture.md#invariants). The schema documents each field for the person writing the file.
 */

/** One environment of a component: one cell of the dashboard. */
export interface EnvironmentSettings {
  name: string;
  /** Absolute; absent: the component's. */
  workingDir?: string | undefined;
  varFiles?: string[] | undefined;
  workspace?: string | undefined;
  env?: Record<string, string> | undefined;
}

/** Where a delivered component's code comes from (git bundles from headquarters). */
export interface SourceSettings {
  repo: string;
  path: string;
  /** Ref patterns this component may plan; the first is its default ref. */
  refs: string[];
}

/** Applying approved plans: absent means off. */
export interface ApplySettings {
  /** Absent: every environment of the component. */
  environments?: string[] | undefined;
  refs: string[];
  /** Pinned approver keys (`ed25519:…`). */
  approvers: string[];
  quorum: number;
  maxApprovalAgeS: number;
}

/** One component: a root module planned in each of its environments. */
export interface ComponentSettings {
  name: string;
  workingDir?: string | undefined;
  source?: SourceSettings | undefined;
  init?: boolean | undefined;
  environments: EnvironmentSettings[];
  tool: 'terraform' | 'tofu';
  command?: string[] | undefined;
  env: Record<string, string>;
  timeoutS: number;
  lockTimeoutS: number;
  lockRetryThreshold: number;
  apply?: ApplySettings | undefined;
}

/** What the final scan treats as secret besides the plan's own values. */
export interface RedactionSettings {
  patterns: { name: string; regex: string }[];
  sensitiveAttributes: string[];
  publicVariables: string[];
  keepCustomMessages: boolean;
}

/** The settings a plan or an apply reads. */
export interface PlanSettings {
  components: ComponentSettings[];
  limits: { maxPlanBytes: number; maxLogBytes: number };
  redaction: RedactionSettings;
}
