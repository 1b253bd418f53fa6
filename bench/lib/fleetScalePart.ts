import { timedViews } from '../../hub/bench/dashboardViews.js';
import { lastJsonLine, runTs } from './child.js';

const min = 60_000;

/**
 * The fleetScale part (issue 41): a hub filled through its hop API (1,000 × 200; --quick 100 × 200;
 * --sites/--cells), on SQLite, on PostgreSQL, and two hubs on one PostgreSQL database; each hub in a
 * process of its own (hub/bench/fleetScale.ts).
 */
export function fleetScalePart(quick: boolean, flag: string[]) {
  return {
    keys: {
      ...Object.fromEntries(
        ['sqlite', 'postgres'].map((store) => [
          store,
          {
            sites: 0,
            cells: 0,
            fillResultsPerSec: 0,
            // Every read of the dashboard's Api port that fleetScale times (hub/bench/dashboardViews.ts).
            views: Object.fromEntries(
              Object.keys(timedViews('', [])).map((v) => [v, { p50Ms: 0, p95Ms: 0, wireBytes: 0, rssMb: 0 }]),
            ),
            firstPaint: { overviewMs: 0, matrixFirstTileMs: 0, runs: 0 },
            // Round 3's blocks pushed alone, interleaved with blocks pushed with 10 dashboards connected.
            ingestResultsPerSec: { alone: 0, with10Clients: 0 },
            ingestWithClientsRatio: 0,
            liveDelayMs: { p50: 0, p95: 0, samples: 0 },
            // The hub's own process (hubProcess.ts): after the views, sampled peak and its phase, VmHWM.
            rssMb: { afterViews: 0, peak: 0, peakPhase: '', hwm: 0 },
            // The hub's main thread during the views: event-loop delay (stalls).
            loopDelayMs: { views: { p99: 0, max: 0 } },
          },
        ]),
      ),
      // Two hubs on one PostgreSQL database: round 3's blocks through one hub, interleaved with blocks
      // split between both (hub/bench/fleetPush.ts).
      postgresTwoHubs: {
        ingestResultsPerSec: { oneHub: 0, twoHubs: 0 },
        twoHubRatio: 0,
        rssMb: { hwm: 0 },
      },
    },
    // Issue 41: a hub filled through its hop API (1,000 × 200; --quick 100 × 200; --sites/--cells), on
    // SQLite, on PostgreSQL, and two hubs on one PostgreSQL database; each hub in a process of its own
    // (hub/bench/fleetScale.ts).
    run: async () => {
      const size = process.argv.flatMap((a, i) =>
        /^--(sites|cells)(=|$)/.test(a) ? (a.includes('=') ? [a] : [a, process.argv[i + 1] ?? '']) : [],
      );
      const out: Record<string, unknown> = {};
      const runs: [string, string[]][] = [
        ['sqlite', ['--store', 'sqlite']],
        ['postgres', ['--store', 'postgres']],
        ['postgresTwoHubs', ['--store', 'postgres', '--hubs', '2']],
      ];
      for (const [name, args] of runs) {
        const r = await runTs(
          'hub/bench/fleetScale.ts',
          [...flag, ...size, ...args],
          (quick ? 15 : 90) * min,
        );
        out[name] = lastJsonLine(r.stdout);
      }
      return out;
    },
  };
}
