import { z } from 'zod';
import { canonical, cborDecode } from './cbor.js';
import { overlayConfirmed } from './docConfirmed.js';
import { AgentIdSchema, RunIdSchema, Sha256Schema, SiteIdSchema } from './ids.js';
import { PlanCountsSchema, PlanStatusSchema, PlanSummarySchema } from './planSummary.js';
import { DocPublicationStateSchema } from './publications.js';

/**
 * The agent's Automerge document: one per agent per epoch (C1 in docs/architecture.md#invariants). The agent writes it; the hub
 * keeps a replica per epoch and materialises runs, cells and sites from it. Plain JSON-compatible data
 * only (Automerge maps, lists, strings, numbers, booleans).
 *
 * Times are milliseconds since the epoch on the agent's clock.
 * Document id (bundle header `doc`): `docId(site, agent, epoch)`.
 */

/** A run as recorded in the document: the summary without `resources` (those travel in the detail blob). */
export const DocRunSchema = z.object({
  runId: RunIdSchema,
  environment: z.string(),
  component: z.string(),
  summary: PlanSummarySchema.omit({ resources: true }),
  /** The ref planned, when the component's source comes from the site's git mirror. */
  ref: z.string().max(200).optional(),
  /** sha256 of the compressed redacted detail (full PlanSummary as JSON, brotli), when one exists. */
  detailBlob: Sha256Schema.optional(),
  recordedAt: z.number().int().nonnegative(),
});
export type DocRun = z.infer<typeof DocRunSchema>;

/**
 * The latest fact per cell: keyed `environment/component` for the component's default ref,
 * `environment/component@ref` for any other ref (`cellKey`).
 */
export const DocCellSchema = z.object({
  environment: z.string(),
  component: z.string(),
  /** The ref planned (absent for a component without a repository). */
  ref: z.string().max(200).optional(),
  /** The commit planned, when known. */
  commit: z.string().max(64).optional(),
  /** For `blocked`: what the site needs. */
  needs: z.array(z.string().max(300)).max(50).optional(),
  /** The run that produced the current result. */
  runId: RunIdSchema,
  status: PlanStatusSchema,
  counts: PlanCountsSchema.optional(),
  reason: z.string().optional(),
  planHash: Sha256Schema.optional(),
  /** When the latest plan (including an "unchanged" confirmation) finished at the site. */
  plannedAt: z.number().int().nonnegative(),
  /** Set when later runs found the same plan: the last of those confirmed it at `plannedAt`. */
  unchangedSince: z.number().int().nonnegative().optional(),
  /** How many runs in a row confirmed the same plan. */
  confirmations: z.number().int().nonnegative(),
  /** Consecutive `locked` results, for the stuck-lock threshold. */
  lockedStreak: z.number().int().nonnegative().optional(),
});
export type DocCell = z.infer<typeof DocCellSchema>;

/** Where an approval of a run stands at the agent: the apply run's record. Times on the agent clock, ms. */
export const APPLY_STATES = ['waiting-quorum', 'applying', 'applied', 'apply-failed', 'refused'] as const;
export const DocApplySchema = z.object({
  /** The approved plan run. */
  runId: RunIdSchema,
  environment: z.string(),
  component: z.string(),
  ref: z.string().max(200).optional(),
  state: z.enum(APPLY_STATES),
  /** Why it was refused (`unknown approver …`, `expired`, `superseded by <runId>`, …) or failed. */
  reason: z.string().max(300).optional(),
  /** Approval ids counted so far, and the distinct approvers they came from. */
  approvalIds: z.array(z.string().max(64)).max(50),
  approvers: z.array(z.string().max(60)).max(50),
  /**
   * Approvals of this run the agent refused, each with its own reason and when (agent clock), the
   * latest 20: what headquarters shows per approval, apart from the run's state (decision 250).
   */
  refused: z
    .array(
      z.object({
        approvalId: z.string().max(64),
        reason: z.string().max(300),
        at: z.number().int().nonnegative(),
      }),
    )
    .max(20)
    .optional(),
  quorum: z.number().int().positive().optional(),
  receivedAt: z.number().int().nonnegative(),
  startedAt: z.number().int().nonnegative().optional(),
  finishedAt: z.number().int().nonnegative().optional(),
  /** A short, secret-scanned excerpt of the apply's error output. */
  errorExcerpt: z.string().max(2000).optional(),
  /** The plan run the agent made after applying, so the cell shows the result. */
  nextRunId: RunIdSchema.optional(),
  updatedAt: z.number().int().nonnegative(),
});
export type DocApply = z.infer<typeof DocApplySchema>;

/**
 * A hub plan request as the agent received it, keyed by request id: the agent's own signed word that it
 * arrived (docs/decisions/230-time-a-hop-cannot-forge.md). Times on the agent clock, ms.
 */
export const DocPlanRequestSchema = z.object({
  environment: z.string(),
  component: z.string(),
  state: z.enum(['accepted', 'refused', 'expired']),
  receivedAt: z.number().int().nonnegative(),
  detail: z.string().max(300).optional(),
  /** The ref and commit the request asked for, when it named them (the run that answers plans them). */
  ref: z.string().max(200).optional(),
  commit: z.string().max(64).optional(),
  /**
   * The run the agent started for this request, stamped when its plan finished: the run itself, or for
   * a plan found unchanged the run its cell confirms. Only a run started after `receivedAt` is stamped,
   * so a scheduled run already under way when the request arrived answers nothing (decision 300).
   */
  runId: RunIdSchema.optional(),
  /** When that plan finished (agent clock). */
  answeredAt: z.number().int().nonnegative().optional(),
  /**
   * When the agent started the plan that will answer it (agent clock), written as the run begins so the
   * hub can show it running (docs/decisions/560-plan-request-states.md). Same rule as `runId`.
   */
  startedAt: z.number().int().nonnegative().optional(),
});
export type DocPlanRequest = z.infer<typeof DocPlanRequestSchema>;

/** The agent's own facts, refreshed when it records or pushes. */
export const AgentFactsSchema = z.object({
  version: z.string(),
  /** Declared plan interval per cell key, seconds (from the cron cadence). */
  cadenceS: z.record(z.string(), z.number().nonnegative()),
  /** Seconds between pushes the agent expects to manage (its contact interval), when known. */
  contactIntervalS: z.number().nonnegative().optional(),
  /** Contact windows as configured (cron-like text), when known. */
  contactWindows: z.array(z.string()).optional(),
  /**
   * Contact windows the hub declared for this site (`contactPlans.sites`) that this agent holds and aims
   * at, as the hub's signed `contact-windows` control said them; the hub judges the site by them only once
   * they are here (docs/decisions/590-windows-declared-once.md). Absent: none held.
   */
  hubWindows: z.array(z.string().max(200)).max(50).optional(),
  queueDepth: z.number().int().nonnegative(),
  oldestUnsentAt: z.number().int().nonnegative().optional(),
  /** The relay URL the agent currently pushes to (for the site view). */
  upstream: z.string().optional(),
  /** Ref patterns each cell key may plan (`["main", "pr/*"]`), for components with a repository. */
  refs: z.record(z.string(), z.array(z.string().max(200)).max(50)).optional(),
  /** Heads of the agent's git mirrors: repository → ref → commit. */
  sources: z.record(z.string(), z.record(z.string(), z.string().max(64))).optional(),
  /** Provider builds in the agent's filesystem mirror (`host/ns/type version os_arch`). */
  providers: z.array(z.string().max(300)).max(5000).optional(),
  /** The agent's `os_arch` as Terraform names it (`linux_amd64`). */
  platform: z.string().max(50).optional(),
  /**
   * Detail blobs an upstream took (tus completion) that the hub has not acknowledged yet, oldest first, at
   * most 50: the run, the upstream as the agent names it, and when (agent clock). The agent keeps each
   * and uploads it again until the hub acknowledges it (docs/decisions/220-receipts-for-every-kind.md).
   */
  detailUploads: z
    .array(
      z.strictObject({
        runId: RunIdSchema,
        sha256: Sha256Schema,
        upstream: z.string().max(300),
        uploadedAt: z.number().int().nonnegative(),
      }),
    )
    .max(50)
    .optional(),
  /**
   * What this agent reads that an older one refuses, so the hub may send it: `inline-publications`, a
   * small file inside its signed manifest (docs/decisions/360-source-bundle-bytes.md); `wire2-publications`,
   * the compact manifest (docs/decisions/505-compact-publications.md); `wire2-git-heads`, a git bundle's
   * heads packed in it (decision 520). Absent: nothing new.
   */
  reads: z.array(z.string().max(40)).max(20).optional(),
  /**
   * Upstreams that held this agent's results (custody) past their deadline without the hub's ack, and were
   * passed over for it: the upstream as the agent names it, the results it held, when the oldest was given
   * and when it was first found sitting (agent clock), and how often what it held went again by another
   * way (docs/decisions/575-custody-deadline-per-path.md). Absent: none.
   */
  custodyOverdue: z
    .array(
      z.strictObject({
        upstream: z.string().max(300),
        results: z.number().int().nonnegative(),
        oldestAt: z.number().int().nonnegative(),
        since: z.number().int().nonnegative(),
        resends: z.number().int().nonnegative(),
      }),
    )
    .max(10)
    .optional(),
  reportedAt: z.number().int().nonnegative(),
});
export type AgentFacts = z.infer<typeof AgentFactsSchema>;

/** The fact (`reads`) of an agent that takes a publication inside its manifest (decision 360). */
export const READS_INLINE_PUBLICATIONS = 'inline-publications';
/**
 * The fact (`reads`) of an agent that takes the hub's compact v2 `publication` message, stated only while
 * every upstream says it carries them (`carries`; docs/decisions/505-compact-publications.md).
 */
export const READS_WIRE2_PUBLICATIONS = 'wire2-publications';
/**
 * The fact (`reads`) of an agent that takes a compact publication's git bundle with its heads packed
 * (docs/decisions/520-packed-git-heads.md), stated only while every upstream carries them.
 */
export const READS_WIRE2_GIT_HEADS = 'wire2-git-heads';
/**
 * The fact (`reads`) of an agent that takes the hub's `contact-windows` control: the windows the hub
 * declares for its site (docs/decisions/590-windows-declared-once.md). An older agent refuses it.
 */
export const READS_HUB_WINDOWS = 'hub-windows';

export const AgentDocSchema = z.object({
  site: SiteIdSchema,
  agent: AgentIdSchema,
  epoch: z.number().int().positive(),
  /** Keyed by cell key `environment/component`. */
  cells: z.record(z.string(), DocCellSchema),
  /** Keyed by RunId; runs of this epoch (the first epoch-seed cells point at runs of earlier epochs). */
  runs: z.record(z.string(), DocRunSchema),
  facts: AgentFactsSchema.optional(),
  /**
   * Publications from headquarters and their delivery state at this agent, keyed by publication id. The
   * field keeps its name from before decision 170 (renaming it would migrate every document).
   */
  bundles: z.record(z.string(), DocPublicationStateSchema).optional(),
  /** Approvals received and what became of them, keyed by the approved run id (one apply per run). */
  applies: z.record(z.string(), DocApplySchema).optional(),
  /**
   * Plan requests received, by request id. Present (even empty) in every document of an agent that
   * confirms what it receives: the hub then counts a request delivered only once it is listed here.
   */
  requests: z.record(z.string(), DocPlanRequestSchema).optional(),
  /** Set when the agent sealed this epoch; nothing follows in it. */
  sealedAt: z.number().int().nonnegative().optional(),
  /**
   * When the agent last said it was there (agent clock, ms): written in a contact window it had nothing
   * else to say in, so the hub hears it, signed (docs/decisions/450-contact-the-agent-proves.md).
   */
  presentAt: z.number().int().nonnegative().optional(),
});
export type AgentDoc = z.infer<typeof AgentDocSchema>;

export function docId(site: string, agent: string, epoch: number): string {
  return `${site}/${agent}/epoch-${epoch}`;
}

export function parseDocId(id: string): { site: string; agent: string; epoch: number } | null {
  const m = id.match(/^([a-z0-9][a-z0-9._-]{0,62})\/([a-z0-9][a-z0-9._-]{0,62})\/epoch-([1-9][0-9]{0,9})$/);
  return m ? { site: m[1] as string, agent: m[2] as string, epoch: Number(m[3]) } : null;
}

/** Content type of a plan detail blob: the full redacted PlanSummary as JSON, brotli-compressed. */
export const PLAN_DETAIL_CONTENT_TYPE = 'application/vnd.driftline.plan-detail+json;encoding=br';

/**
 * Turns a value read from an Automerge document (`Automerge.toJS`) into plain JSON data. The agent writes
 * strings as Automerge `ImmutableString` (scalar strings: far fewer bytes than collaborative text), which
 * read back as objects with `toJSON()`; validate documents with `AgentDocSchema` only after this.
 */
export function plainDocValue(value: unknown): unknown {
  const leaf = (v: unknown): { done: unknown } | null => {
    if (v === null || typeof v !== 'object') return { done: v };
    if (v instanceof Uint8Array || v instanceof Date) return { done: v };
    const text = immutableText(v);
    return text !== null ? { done: text } : null;
  };
  const first = leaf(value);
  if (first) return first.done;
  // Iterative (an agent's document is untrusted: its nesting must not reach the call stack's limit), and
  // every key is defined as an own property, so that a `__proto__` key is data, never a prototype
  // (docs/decisions/570-hostile-document-keys.md).
  const root: unknown = Array.isArray(value) ? [] : {};
  const work: { from: object; to: Record<string, unknown> | unknown[] }[] = [
    { from: value as object, to: root as Record<string, unknown> },
  ];
  for (let item = work.pop(); item; item = work.pop()) {
    const entries: [string | number, unknown][] = Array.isArray(item.from)
      ? item.from.map((v, i) => [i, v])
      : Object.entries(item.from);
    for (const [k, v] of entries) {
      const l = leaf(v);
      const out = l ? l.done : Array.isArray(v) ? [] : {};
      if (Array.isArray(item.to)) item.to[k as number] = out;
      else
        Object.defineProperty(item.to, k, {
          value: out,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      if (!l) work.push({ from: v as object, to: out as Record<string, unknown> });
    }
  }
  return root;
}

/** The text of an Automerge ImmutableString as read from a document (an object with `val`), or null. */
export function immutableText(value: unknown): string | null {
  if (value === null || typeof value !== 'object') return null;
  const v = value as { val?: unknown; toJSON?: unknown };
  return typeof v.val === 'string' && typeof v.toJSON === 'function' ? v.val : null;
}

/**
 * Runs and cells are written packed: each `runs[id]` and `cells[key]` entry is one scalar string (an
 * Automerge ImmutableString) holding the entry's canonical JSON (keys sorted, undefined left out),
 * instead of a map of fields. Automerge then holds one operation per entry instead of one per field,
 * which is what merging costs at the hub (decision 008); a string crosses from Automerge's WebAssembly
 * heap to JS far cheaper than a byte array, and `JSON.parse` is the fastest decoder there is. Readers
 * accept every shape: maps (agents from before packing) and CBOR byte strings (the first packed form).
 */
export function packDocEntry(value: DocRun | DocCell): string {
  return JSON.stringify(canonical(value));
}

/** An entry of `runs` or `cells` as plain data, whichever shape it was written in (see `packDocEntry`). */
export function unpackDocEntry(value: unknown): unknown {
  const text = typeof value === 'string' ? value : immutableText(value);
  if (text !== null) {
    try {
      return JSON.parse(text);
    } catch {
      // Not JSON: left as text, so that schema validation names the entry.
      return text;
    }
  }
  if (value instanceof Uint8Array) {
    try {
      return cborDecode(value);
    } catch {
      return value;
    }
  }
  return plainDocValue(value);
}

/**
 * A whole agent document (`Automerge.toJS`) as plain data for `AgentDocSchema`: `plainDocValue`, with
 * the packed entries of `runs` and `cells` unpacked.
 */
export function plainAgentDoc(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return plainDocValue(value);
  const doc: Record<string, unknown> = {};
  const confirmed = (value as { confirmed?: unknown }).confirmed;
  const conf =
    confirmed !== null && typeof confirmed === 'object' ? (confirmed as Record<string, unknown>) : {};
  for (const [k, v] of Object.entries(value)) {
    // Applied to the cells below (decision 330): the plain document shows each cell as confirmed.
    if (k === 'confirmed') continue;
    doc[k] =
      (k === 'runs' || k === 'cells') && v !== null && typeof v === 'object' && !Array.isArray(v)
        ? Object.fromEntries(
            Object.entries(v).map(([key, entry]) => [
              key,
              k === 'cells' && Object.hasOwn(conf, key)
                ? overlayConfirmed(unpackDocEntry(entry), conf[key])
                : unpackDocEntry(entry),
            ]),
          )
        : plainDocValue(v);
  }
  return doc;
}
