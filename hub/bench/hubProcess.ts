/**
 * A hub under test in its own process (fleetScale's default; compiled to hub/dist/bench-hub.mjs as the
 * hub's own programs are, so no TypeScript loader is measured): `createHub` on a bench clock the parent
 * advances, listening on free ports; answers the parent's questions over IPC (hubProbe.ts). Started
 * with one JSON argument: { dataDir, uiDir, clock, postgres?: { url } } (password in FLEET_PG_PASSWORD).
 */
import pino from 'pino';
import { createHub } from '../src/app.js';
import { parseConfig } from '../src/config.js';
import { TestClock } from '../test/agentSim.js';
import { hubProbe } from './hubProbe.js';

export interface HubProcessArgs {
  dataDir: string;
  uiDir: string;
  clock: number;
  postgres?: { url: string };
}
export type HubQuestion =
  | { op: 'advance'; ms: number }
  | { op: 'sweep' }
  | { op: 'memory' }
  | { op: 'loopDelay'; reset: boolean }
  | { op: 'close' };
export type HubAsk = HubQuestion & { id: number };

const send = (m: unknown) => process.send?.(m);
const args = JSON.parse(process.argv[2] ?? '{}') as HubProcessArgs;
const clock = new TestClock(args.clock);
const cfg = parseConfig(
  {
    dataDir: args.dataDir,
    uiDir: args.uiDir,
    listen: { host: '127.0.0.1', port: 0 },
    sweepIntervalS: 15,
    ...(args.postgres
      ? { store: { kind: 'postgres', url: args.postgres.url, passwordEnv: 'FLEET_PG_PASSWORD' } }
      : {}),
  },
  args.dataDir,
  process.env,
);
if (!cfg.ok) throw new Error(cfg.errors.join('; '));
const hub = await createHub(cfg.config, { clock, logger: pino({ level: 'silent' }) });
const urls = await hub.listen();
hub.startTimers();
const probe = hubProbe(hub);
process.on('message', async (m: HubAsk) => {
  try {
    if (m.op === 'advance') clock.advance(m.ms);
    if (m.op === 'sweep') await hub.sweeper.sweep();
    if (m.op === 'close') await hub.close();
    const value =
      m.op === 'memory' ? await probe.memory() : m.op === 'loopDelay' ? probe.loopDelay(m.reset) : null;
    send({ id: m.id, value });
    if (m.op === 'close') process.exit(0);
  } catch (e) {
    send({ id: m.id, error: (e as Error).stack ?? String(e) });
  }
});
send({ ready: urls });
