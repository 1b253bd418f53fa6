/** What a simulated deployment looks like: one hub, one relay, agents at sites behind emulated links. */
export interface SiteSpec {
  site: string;
  agent: string;
  /** Link profile between this site's agent and the relay. */
  profile: string;
  timeScale: number;
  components: Array<{ name: string; environments: string[]; schedule: string }>;
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
   */
  fastPlans?: boolean;
}

/** The `npm start` demo: three sites on different, time-compressed links. */
export function demoSpec(dir: string): TopologySpec {
  const components = (schedule: string) => [
    { name: 'network', environments: ['prod', 'staging'], schedule },
    { name: 'database', environments: ['prod', 'staging'], schedule },
  ];
  return {
    dir,
    sites: [
      { site: 'ship-7', agent: 'a1', profile: 'geo', timeScale: 1, components: components('*/30 * * * * *') },
      // A polar day in 4 minutes: the station is out of contact for most of it.
      {
        site: 'polar-1',
        agent: 'a1',
        profile: 'polar',
        timeScale: 360,
        components: components('*/40 * * * * *'),
      },
      // Mars at 1/60: 4–24 s one way, contact windows of minutes.
      {
        site: 'mars-base',
        agent: 'a1',
        profile: 'mars',
        timeScale: 60,
        components: components('0 * * * * *'),
      },
    ],
    relayLink: { profile: 'lan', timeScale: 1 },
    agentSyncIntervalS: 5,
  };
}
