/**
 * Named scenarios for `npm run sim`: every link profile, time-compressed so its character (delay,
 * windows, outages, resets) shows within a run of minutes, plus `chaos`.
 */
export interface Scenario {
  name: string;
  profile: string;
  timeScale: number;
  /** SIGKILL agents, relay and hub at random moments and restart them after a random pause. */
  chaos: boolean;
  description: string;
}

export const SCENARIOS: Record<string, Scenario> = {
  lan: { name: 'lan', profile: 'lan', timeScale: 1, chaos: false, description: 'no delay, no loss' },
  geo: {
    name: 'geo',
    profile: 'geo',
    timeScale: 1,
    chaos: false,
    description: 'geostationary: ~600 ms RTT, 1 Mbit/s',
  },
  'leo-windows': {
    name: 'leo-windows',
    profile: 'leo-windows',
    timeScale: 95,
    chaos: false,
    description: 'low orbit: a 6 s pass every 60 s (10 min every 95 min, ×95)',
  },
  polar: {
    name: 'polar',
    profile: 'polar',
    timeScale: 1440,
    chaos: false,
    description: 'a polar day per minute: 10 s of contact',
  },
  mars: {
    name: 'mars',
    profile: 'mars',
    timeScale: 720,
    chaos: false,
    description: 'Mars at ×720: 1 s one way, 40 s of contact every ~2 min',
  },
  flaky: { name: 'flaky', profile: 'flaky', timeScale: 1, chaos: false, description: 'resets and stalls' },
  chaos: {
    name: 'chaos',
    profile: 'flaky',
    timeScale: 1,
    chaos: true,
    description: 'flaky links, and agents, relay and hub SIGKILLed at random and restarted',
  },
};
