import type { LinkSettingsInput } from '../core/link/settings.js';

/** What a simulated deployment looks like: one hub, one relay, agents at sites behind emulated links. */
export interface SiteSpec {
  site: string;
  agent: string;
  /** Link profile between this site's agent and the relay. */
  profile: string;
  timeScale: number;
  components: Array<{
    name: string;
    environments: string[];
    schedule: string;
    /** Code headquarters delivers as git bundles, instead of a working directory the set-up writes. */
    source?: { repo: string; path: string; refs: string[] };
    /** Apply approved plans (the agent's `apply` block). */
    apply?: { refs: string[]; approvers: string[]; quorum: number };
  }>;
  /**
   * Keep the fake terraform's state (run count, applied plans) in one directory for the site, so it
   * survives the scratch checkouts of delivered code (FAKE_TERRAFORM_STATE_DIR).
   */
  toolState?: boolean;
  /** Link settings on top of the profile (deep-merged), such as a schedule of its own. */
  linkSettings?: LinkSettingsInput;
  /** More of this site's agent `sync` block, over the topology's `agentSync` (e.g. `wire: 2`). */
  agentSync?: Record<string, unknown>;
  /** This site's agent `publications` block (e.g. `{ accept: { file: { dir: ./files } } }`). */
  publications?: Record<string, unknown>;
}

export interface TopologySpec {
  /** Absolute directory holding every node's data, configs and logs. */
  dir: string;
  sites: SiteSpec[];
  /** The link from the relay to the hub. */
  relayLink: { profile: string; timeScale: number };
  /** Ports of the hub and relay (0: pick free ones). */
  hubPort?: number;
  relayPort?: number;
  /** Seconds between the agents' push/pull cycles. */
  agentSyncIntervalS?: number;
  /** More of the agents' `sync` block, over the set-up's (e.g. `backoffCapS` back at its default). */
  agentSync?: Record<string, unknown>;
  /** The hub's `contactPlans` block, over the set-up's (`graceS: 30, learnSilenceS: 20`). */
  hubContactPlans?: Record<string, unknown>;
  /** The agents' `sync.recordWindowS` (their default, 5 s, when unset): how long a result waits to share a write. */
  agentRecordWindowS?: number;
  /** The built dashboard to serve (absolute). */
  uiDir?: string;
  /**
   * The hub's `api.rateLimit.perMinute` (its default, 600, when unset). Scenarios raise it: their
   * collector reads every cell's runs every second with the one admin token.
   */
  hubApiPerMinute?: number;
  seed?: number;
  /**
   * Plans from pre-generated plan JSON through the agent's command override (a few ms each) instead of
   * the fake terraform program (about a second of CPU each): for scenarios that need many results.
   * `'quiet'`: every plan the same clean one, so each re-plan after the first is unchanged.
   */
  fastPlans?: boolean | 'quiet';
  /**
   * Plans replay what the fake terraform answers for each cell's scenario, recorded at set-up (a few ms
   * each instead of about a second of CPU): the same plans, failures and locks, for a whole fleet.
   */
  recordedPlans?: boolean;
  /**
   * Which terraform the agents run: the simulation's fake (default), or the real binary on PATH planning
   * `terraform_data` stacks written at set-up (realStacks.ts); `fastPlans`/`recordedPlans` then do not apply.
   */
  terraform?: 'fake' | 'real';
  /**
   * One cell, `site/environment/component`, whose state lock someone holds from its third plan on and
   * never releases: the fake terraform answers Terraform's lock error with the same Lock Info every run,
   * so the agent marks the cell `stuck-lock` after `lockRetryThreshold` runs
   * (docs/decisions/555-stuck-lock-stays-stuck.md). The fake terraform only; the demo's
   * `DRIFTLINE_DEMO_HOLD_LOCK`.
   */
  heldLock?: string;
}

/**
 * The demo fleet's components, each planned in every `DEMO_ENVIRONMENTS` entry at every demo site: the one
 * place to add a component (one with a git repository included).
 */
export const DEMO_COMPONENTS: ReadonlyArray<{ name: string }> = [
  { name: 'network' },
  { name: 'database' },
  { name: 'compute' },
  { name: 'storage' },
  { name: 'dns' },
  { name: 'monitoring' },
];

export const DEMO_ENVIRONMENTS: readonly string[] = ['prod', 'staging', 'dev'];

/**
 * One component whose code headquarters delivers: the demo publishes its repository's `main` and an
 * open PR (`DEMO_PR_REF`) as git bundles, and the site plans both (the dashboard's ref selector).
 */
export const DEMO_SOURCE = {
  site: 'ship-7',
  name: 'edge-app',
  environments: ['prod'],
  source: { repo: 'infra', path: 'stacks/edge-app', refs: ['main', 'pr/*'] },
} as const;
export const DEMO_PR_REF = 'pr/7';

/**
 * The demo's sites: each link as harsh as its profile says, time-compressed; `schedule` is every cell's
 * cadence there. The polar and Mars windows open when the site's agent starts (Topology starts each link
 * with its agent), so every site's first results arrive in the first minutes.
 */
export const DEMO_SITES: ReadonlyArray<Omit<SiteSpec, 'components'> & { schedule: string }> = [
  { site: 'ship-7', agent: 'a1', profile: 'geo', timeScale: 1, schedule: '*/30 * * * * *' },
  // A polar day in 4 minutes: in contact 40 s of every 240 s.
  { site: 'polar-1', agent: 'a1', profile: 'polar', timeScale: 360, schedule: '*/40 * * * * *' },
  // Mars at 1/60: 12 s one way, contact windows of 8 minutes every ~25.
  { site: 'mars-base', agent: 'a1', profile: 'mars', timeScale: 60, schedule: '0 * * * * *' },
];

/** The `npm start` demo: a fleet of `DEMO_COMPONENTS` × `DEMO_ENVIRONMENTS` at three sites on different links. */
export function demoSpec(
  dir: string,
  opts: { approverKey?: string; terraform?: 'fake' | 'real' } = {},
): TopologySpec {
  const real = opts.terraform === 'real';
  return {
    dir,
    sites: DEMO_SITES.map(({ schedule: fakeSchedule, ...site }) => {
      // A real plan costs a little more CPU than a replayed one: each site plans its cells every 2 minutes.
      const schedule = real ? REAL_SCHEDULE : fakeSchedule;
      return {
        ...site,
        ...(site.site === DEMO_SOURCE.site && opts.approverKey ? { toolState: true } : {}),
        components: [
          ...DEMO_COMPONENTS.map((c) => ({ ...c, environments: [...DEMO_ENVIRONMENTS], schedule })),
          ...(site.site === DEMO_SOURCE.site
            ? [
                {
                  name: DEMO_SOURCE.name,
                  environments: [...DEMO_SOURCE.environments],
                  // Planned when headquarters publishes (and after an apply), not on the fleet's cadence.
                  schedule: '0 0 * * * *',
                  source: { ...DEMO_SOURCE.source, refs: [...DEMO_SOURCE.source.refs] },
                  ...(opts.approverKey
                    ? { apply: { refs: ['main'], approvers: [opts.approverKey], quorum: 1 } }
                    : {}),
                },
              ]
            : []),
        ],
      };
    }),
    relayLink: { profile: 'lan', timeScale: 1 },
    agentSyncIntervalS: 5,
    // Recorded plans take milliseconds: a site's first round of 18 plans fills its cells in seconds.
    agentRecordWindowS: 1,
    recordedPlans: !real,
    ...(real ? { terraform: 'real' as const } : {}),
  };
}

/** Every cell's cadence in the demo on the real terraform (`npm start -- --terraform=real`). */
export const REAL_SCHEDULE = '0 */2 * * * *';
