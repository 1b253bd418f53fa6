import inject from 'light-my-request';
import { seededRandom } from '../core/rng.js';
import { VirtualTime } from './VirtualTime.js';
import { WORLD_START } from './World.js';
import { WorldLink } from './WorldLink.js';
import type { Dispatch } from './WorldNetwork.js';

/**
 * A world whose clock drives itself (docs/decisions/540-deterministic-world.md, "The hostile suite on the
 * world"): installed at {@link WORLD_START}, `Math.random` the seed's, time moving whenever the process
 * is idle. What the test topologies built on it (`virtualWorld.ts`, `virtualBusySite.ts`) share.
 */
export function startDriven(seed: number): {
  time: VirtualTime;
  /** The machine's clock, read before the world's replaced `Date`. */
  realNow: () => number;
  /** Stops the driving, uninstalls the clock and gives `Math.random` back. */
  end(): Promise<void>;
} {
  const realNow = Date.now.bind(Date);
  const time = new VirtualTime();
  time.install(WORLD_START);
  const savedRandom = Math.random;
  Math.random = seededRandom(`${seed}:math`);
  time.drive();
  return {
    time,
    realNow,
    end: () =>
      time.stopDriving().finally(() => {
        time.uninstall();
        Math.random = savedRandom;
      }),
  };
}

/** A LAN between any two nodes nobody connected: `delayMs` each way, each pair its own stream of the seed. */
export const lanLinks =
  (seed: number, delayMs = 2) =>
  (from: string, to: string) =>
    new WorldLink(
      `${from}>${to}`,
      { uplink: { delayMs }, downlink: { delayMs } },
      WORLD_START,
      undefined,
      seededRandom(`${seed}:${from}>${to}`),
    );

/** A call of a node's request listener from where no link is (headquarters, a test), as a fetch `Response`. */
export async function callNode(
  node: string,
  dispatch: Dispatch,
  path: string,
  init: RequestInit = {},
): Promise<Response> {
  const r = await inject(dispatch, {
    method: (init.method ?? 'GET') as 'GET',
    url: path,
    headers: { host: `${node}.world`, ...(init.headers as Record<string, string>) },
    ...(init.body ? { payload: init.body as string } : {}),
  });
  return new Response(r.statusCode === 204 ? null : new Uint8Array(r.rawPayload), {
    status: r.statusCode,
    headers: r.headers as Record<string, string>,
  });
}
