import { HopClient } from '@driftline/hop/client';
import { wire2Registration } from '@driftline/hop/testing';
import { startHub } from './hubFixture.js';

/** A hub with ship-7/a1 enrolled, and that agent's key registered for hop v2 with the hub itself. */
export async function wire2Hub() {
  const hub = await startHub();
  const agent = hub.agent;
  const client = new HopClient({ url: hub.hopUrl, token: 'relay-token', timeoutMs: 10_000 });
  const info = await client.registerWire2(await wire2Registration(agent.keys));
  if (!info.ok) {
    await hub.close();
    throw new Error(info.message);
  }
  return { agent, client, info, hub };
}
