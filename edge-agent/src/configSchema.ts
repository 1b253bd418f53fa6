import { AgentIdSchema, FileKindSchema, parseWindow, SiteIdSchema } from '@driftline/protocol';
import { z } from 'zod';
import { ComponentSchema, PatternSchema } from './configComponent.js';
import { ReleasesSchema } from './configReleases.js';
import { NEWS_HOLD_DEFAULT_S } from './core/ledger/newsWait.js';

/**
 * The agent's configuration file (`agent.yaml`) as a zod schema. Every key carries a one-line
 * `.describe()`: `edge-agent config schema` prints it as JSON Schema, and docs/configuration.md is
 * generated from that, so the text here is what an operator reads.
 *
 * Everything the agent may run is listed here: the hub can ask for a plan only of a (component,
 * environment) named here (S3 in docs/architecture.md#invariants).
 */

const SyncSchema = z
  .strictObject({
    intervalS: z
      .number()
      .positive()
      .max(86_400)
      .default(30)
      .describe('Seconds between push/pull cycles while the link works.'),
    backoffBaseS: z
      .number()
      .positive()
      .max(3600)
      .default(5)
      .describe('First retry after a failed cycle, seconds; doubles (with jitter) up to backoffCapS.'),
    backoffCapS: z
      .number()
      .positive()
      .max(86_400)
      .default(900)
      .describe(
        'Longest wait between retries of a failing link, seconds; never past the next declared contact window, and at most a quarter of a window inside one.',
      ),
    /**
     * After the hub rejects this agent's bundles (not enrolled yet, revoked, bad signature, …), seconds
     * before everything it has not acknowledged goes up again; at once when a hub ack shows it takes them.
     */
    rejectedRetryS: z
      .number()
      .positive()
      .max(86_400)
      .default(300)
      .describe(
        'Seconds after a hub rejection (e.g. the agent is not enrolled yet) before its results are sent again; at once when a hub ack shows the hub takes them.',
      ),
    /**
     * Seconds after which changes a relay receipted but the hub never acknowledged go up again, in case
     * the relay lost them: a relay holds what it receipted, so resending earlier only costs link bytes.
     */
    resendAfterS: z
      .number()
      .positive()
      .max(30 * 86_400)
      .default(6 * 3600)
      .describe(
        'Seconds after which results and detail blobs a relay took but the hub never acknowledged are sent again (a relay that lost or faked them).',
      ),
    /** docs/decisions/575-custody-deadline-per-path.md */
    custodyDeadlineS: z
      .number()
      .positive()
      .max(30 * 86_400)
      .default(3600)
      .describe(
        "Seconds an upstream may hold the agent's results (custody) without the hub's ack before they are sent again by another upstream, until some upstream has delivered; from then each upstream's deadline is 1.5x its recent delivery time plus a minute (never over resendAfterS). An upstream that sat on custody is passed over until it delivers or resendAfterS passes.",
      ),
    downlinkHoldS: z
      .number()
      .int()
      .min(0)
      .max(86_400)
      .default(21_600)
      .describe(
        'Most seconds an upstream that can is asked to hold a downlink pull open (a long poll, up to a day), so approvals and plan requests arrive one light time after they reach it; the agent asks no more than the upstream states (a relay: its limits.maxHoldS; one before decision 390: at most 3600; an older one: 55). 0 never asks. Pulls go on beside uploads either way.',
      ),
    heldPulls: z
      .number()
      .int()
      .min(1)
      .max(2)
      .default(2)
      .describe(
        'Held downlink pulls kept open at once at an upstream that keeps two: 2, so one still waits there while the answer to the other travels down and control arrives one light time after it reaches the upstream, always; 1 costs half the empty pulls on a quiet day (about 3 kB a day less with 6-hour holds), and control arriving just after an answer then waits up to two light times more.',
      ),
    stallS: z
      .number()
      .int()
      .min(1)
      .max(7_200)
      .default(60)
      .describe(
        "Seconds a downlink answer may make no progress before it is cut and counted as a stall (edge-agent status names the upstream): it must begin within its hold, the upstream's measured round trip and this, pause no longer than this, and past this come at 128 B/s or more. Each upstream's downlink is its own lane, so one that stalls or drips never holds up another's; over a link whose round trip is not measured yet (minutes one way) keep this above it. An answer due at once (a push, a probe) must begin within the measured round trip, this and its bytes at 128 B/s, or the push goes on to the next upstream (docs/decisions/515-answers-due-at-once.md).",
      ),
    bundleLifetimeS: z
      .number()
      .int()
      .positive()
      .default(30 * 86_400)
      .describe("How long relays keep this agent's bundles before dropping (and counting) them, seconds."),
    maxDocBytes: z
      .number()
      .int()
      .min(4096)
      .default(512 * 1024)
      .describe('Start a new document epoch past this size, bytes (bounded load and merge cost).'),
    maxDocChanges: z
      .number()
      .int()
      .min(100)
      .max(1_000_000)
      .default(2000)
      .describe('Start a new document epoch after this many changes as well.'),
    maxQueueBytes: z
      .number()
      .int()
      .min(64 * 1024)
      .default(512 * 1024 * 1024)
      .describe(
        'Bound on unsent bytes on disk; past it detail blobs of clean results go first, counted (never failures).',
      ),
    wire: z
      .number()
      .int()
      .min(1, 'sync.wire is 1 or 2')
      .max(2, 'sync.wire is 1 or 2 (2: hop v2 where the upstream speaks it)')
      .default(2)
      .describe(
        'The hop protocol spoken to upstreams: 1, or 2 where the upstream speaks it (a relay or hub of this version registers the agent key once with its token; from then on each push and pull is one signed binary message with no token or HTTP heads to speak of, a quiet day about half the bytes). An upstream that does not answers 404 and gets v1, asked again a day later.',
      ),
    h2c: z
      .boolean()
      .default(true)
      .describe(
        'With sync.wire 2: carry the v2 exchanges on HTTP/2 with prior knowledge (h2c: one connection kept across rounds, its heads a few bytes each) where the upstream states it serves it; http: upstreams only (https keeps HTTP/1.1). An HTTP/1.1-only proxy on the way is noticed (the preface is not answered) and that upstream gets HTTP/1.1 for a day, said in `edge-agent status`; false: always HTTP/1.1.',
      ),
    newsHoldS: z
      .number()
      .int()
      .nonnegative()
      .max(3600)
      .default(NEWS_HOLD_DEFAULT_S)
      .describe(
        "Longest a scheduled round's changed plan waits for the round's last plan before it is pushed, seconds; never more than a tenth of the cell's cadence (a six-hourly cell: 600 s, an hourly one: 360 s), so a busy round goes up as about one push instead of one push, receipt and ack (~2.5 kB) per changed plan. Never waits: a failed plan, a cell's first result, start-up's plans (planOnStart), a plan request's answer, a manual, source or apply run. 0: each changed plan goes with the next push. Unchanged re-plans wait for the round's end (at most 10 minutes, and at most half the cell's cadence) either way.",
      ),
    recordWindowS: z
      .number()
      .nonnegative()
      .max(60)
      .default(5)
      .describe(
        'Longest a finished result waits so results finishing together are written in one transaction, seconds.',
      ),
    maxParallelRuns: z
      .number()
      .int()
      .positive()
      .max(64)
      .default(2)
      .describe('Plans that may run at the same time.'),
    jitterS: z
      .number()
      .nonnegative()
      .max(3600)
      .default(30)
      .describe(
        'Random delay before a scheduled plan, so cells and agents do not all start together, seconds.',
      ),
    planOnStart: z
      .boolean()
      .default(true)
      .describe(
        'Plan every cell once when the daemon starts, so first results come within a minute (not with run --no-schedule); false waits for each schedule.',
      ),
    contactIntervalS: z
      .number()
      .positive()
      .optional()
      .describe(
        'Seconds between contacts the hub expects before calling the site unreachable; default 2 × (shortest cadence + jitterS) + intervalS.',
      ),
    contactWindows: z
      .array(
        z
          .string()
          .max(200)
          .superRefine((text, ctx) => {
            // one syntax in all three programs, and a window that does not parse is refused as theirs are
            // (docs/decisions/545-agent-refuses-a-malformed-window.md)
            const r = parseWindow(text);
            if (!r.ok)
              ctx.addIssue({
                code: 'custom',
                message: `${r.error}; write 'every 90m for 8m from 2026-11-27T00:00:00Z', '0 2 * * * for 30m' (cron, UTC) or '2026-11-27T14:00:00Z for 8m', each optionally ending 'tz Europe/Berlin' (see docs/configuration.md, sync.contactWindows)`,
              });
          }),
      )
      .max(50)
      .default([])
      .describe(
        "Contact windows of this site's link, in the window syntax of hub and relay ('every 5m for 1m from <ISO time>', '0 2 * * * for 30m' (cron, UTC), '<ISO time> for 8m'): the hub judges the site's silence by them; the agent syncs as each opens, tries at least every min(backoffCapS, window / 4) inside it and sends a small signed presence in a window it has nothing else to say in. Anything else is a configuration error (exit 2).",
      ),
  })
  .prefault({})
  .describe('How results travel upstream and when plans run.');

/** `publications:` of `agent.yaml` (and its deprecated name `bundles:`). */
const PublicationsFields = z.strictObject({
  accept: z
    .partialRecord(
      FileKindSchema,
      z
        .strictObject({
          dir: z
            .string()
            .min(1)
            .describe('Directory files of this kind are placed in, relative to this file.'),
          maxBytes: z
            .number()
            .int()
            .positive()
            .optional()
            .describe('Largest file of this kind accepted, bytes; default no limit beyond quotaBytes.'),
        })
        .describe('Where files of this kind go.'),
    )
    .default({})
    .describe(
      'Kinds accepted (provider-mirror, module, image, config, file) and where each goes; others are refused and reported.',
    ),
  quotaBytes: z
    .number()
    .int()
    .positive()
    .default(10 * 1024 ** 3)
    .describe('Disk the agent may use for publications (files from headquarters), bytes.'),
  chunkBytes: z
    .number()
    .int()
    .positive()
    .default(1024 * 1024)
    .describe('Size of each Range request when fetching a publication, bytes.'),
  retryMs: z
    .number()
    .int()
    .positive()
    .default(15_000)
    .describe('Wait after a failed fetch (link down, relay does not hold it yet) before the next try, ms.'),
});

const PublicationsSchema = PublicationsFields.prefault({}).describe(
  'Publications (files from headquarters): which kinds this site accepts and where they go; nothing is executed.',
);

const LimitsSchema = z
  .strictObject({
    maxPlanBytes: z
      .number()
      .int()
      .positive()
      .default(128 * 1024 * 1024)
      .describe('Plan JSON larger than this is refused before parsing, bytes (bounded memory).'),
    maxLogBytes: z
      .number()
      .int()
      .positive()
      .default(256 * 1024)
      .describe("Bytes of a run's stderr (and a command's non-plan stdout) kept for its error excerpt."),
  })
  .default({ maxPlanBytes: 128 * 1024 * 1024, maxLogBytes: 256 * 1024 })
  .describe('Bounds on what a plan run may produce.');

/** `agent.yaml`. Paths are relative to the file's folder (O1 in docs/architecture.md#invariants). */
export const AgentConfigSchema = z
  .strictObject({
    site: SiteIdSchema.describe(
      "This site's id (lowercase slug, e.g. ship-7); the relay token must be for it.",
    ),
    agent: AgentIdSchema.describe(
      "This agent's id within the site (e.g. a1); enrolled at the hub with its key.",
    ),
    dataDir: z
      .string()
      .min(1)
      .describe(
        'Where the agent keeps its SQLite database, its key and scratch space, relative to this file.',
      ),
    hubPublicKeyFile: z
      .string()
      .min(1)
      .describe(
        "File holding the hub's public key (what `hub key` prints, PEM or ed25519:…), pinned for control traffic; relative to this file.",
      ),
    upstreams: z
      .array(
        z
          .strictObject({
            url: z
              .url({ protocol: /^https?$/ })
              .describe("Base URL of a relay's (or the hub's) hop API, e.g. http://127.0.0.1:7000."),
            tokenFile: z
              .string()
              .min(1)
              .describe(
                'File holding the token that upstream issued for this site (`relay token add`); relative to this file.',
              ),
          })
          .describe('One upstream: URL and token file.'),
      )
      .min(1, 'list at least one upstream (relay or hub)')
      .describe('Where results go: relays (or the hub), in order of preference.'),
    components: z
      .array(
        ComponentSchema.describe(
          'One component: a Terraform root module planned in each of its environments.',
        ),
      )
      .min(1, 'list at least one component')
      .describe('What this agent plans; the hub can ask only for cells listed here.'),
    redaction: z
      .strictObject({
        patterns: z
          .array(PatternSchema.describe('One secret shape.'))
          .default([])
          .describe(
            'Extra secret shapes to scan for, besides the built-in ones; a hit withholds the result.',
          ),
        sensitiveAttributes: z
          .array(z.string().min(1))
          .default([])
          .describe(
            'Attribute names whose values count as secrets even when the provider does not mark them.',
          ),
        publicVariables: z
          .array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_-]{0,63}$/, 'a Terraform variable name'))
          .default([])
          .describe(
            'Root-module variables whose values may appear as they are (readable instance keys like ["eu-west-1"]); every other variable\'s value is masked wherever it appears.',
          ),
        keepCustomMessages: z
          .boolean()
          .default(false)
          .describe(
            "Keep the author-written text (error_message of validations, preconditions, postconditions, check blocks) of a failed plan's diagnostics; it can interpolate any value, so it is dropped by default.",
          ),
      })
      .default({ patterns: [], sensitiveAttributes: [], publicVariables: [], keepCustomMessages: false })
      .describe('What the final scan treats as secret, besides every value the plan and its var files hold.'),
    clock: z
      .enum(['trusted', 'untrusted'])
      .default('untrusted')
      .describe(
        'trusted: this machine keeps its clock disciplined (GPS/NTP), so the hub does not correct its times; untrusted: the hub estimates its offset from round trips.',
      ),
    sync: SyncSchema,
    publications: PublicationsSchema,
    bundles: PublicationsFields.optional().describe(
      'Deprecated: the name of `publications` before decision 170, read for one version with a warning.',
    ),
    sources: z
      .strictObject({
        dir: z
          .string()
          .min(1)
          .optional()
          .describe(
            'Where the agent keeps its bare git mirrors, relative to this file; default <dataDir>/git.',
          ),
        planNewHeads: z
          .boolean()
          .default(true)
          .describe(
            "Plan a component's ref as soon as a git bundle brings a new commit of it (only refs the component lists).",
          ),
      })
      .default({ planNewHeads: true })
      .describe('Code delivered as git bundles (kind git): mirrors kept per repository; hooks never run.'),
    providerMirrors: z
      .array(z.string().min(1))
      .optional()
      .describe(
        "Directories `terraform init` installs providers from (Terraform's filesystem mirror layout), relative to this file; default publications.accept.provider-mirror.dir.",
      ),
    limits: LimitsSchema,
    releases: ReleasesSchema,
  })
  .superRefine((c, ctx) => {
    const seen = new Set<string>();
    c.components.forEach((comp, i) => {
      if (seen.has(comp.name))
        ctx.addIssue({
          code: 'custom',
          path: ['components', i, 'name'],
          message: `component "${comp.name}" is listed twice`,
        });
      seen.add(comp.name);
    });
  })
  .describe('Driftline edge agent configuration (agent.yaml).');
