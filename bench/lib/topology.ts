import { join } from 'node:path';
import { createHub, enrol, parseConfig as hubConfig, sha256Hex } from '@driftline/hub';
import { publicKeyFromText, publicKeyToText } from '@driftline/protocol';
import { createRelay, parseConfig as relayConfig } from '@driftline/relay';
import { type LinkHandle, type LinkSettingsInput, startLink } from '@driftline/simulation';
import { AGENT, SITE, tmp } from './agent.js';

/**
 * The real chain, in process: hub (its app.ts) ← link ← relay (its app.ts) ← link ← agent.
 * The agent is enrolled at the hub, the relay holds a hub peer token, the agent a relay token.
 */
export async function startChain(
  agentPublicKey: CryptoKey,
  link: LinkSettingsInput,
  relayForward: object = {},
  /** The relay ← hub link's settings when they differ from `link` (a relay beside the hub). */
  hubLinkSettings: LinkSettingsInput = link,
) {
  const hubDir = tmp('hub');
  const hc = hubConfig({ dataDir: hubDir, uiDir: join(hubDir, 'no-ui') }, hubDir, {});
  if (!hc.ok) throw new Error(hc.errors.join('; '));
  const hub = await createHub(hc.config);
  const hubAddr = await hub.hop.listen(0, '127.0.0.1');
  await hub.store.commit({
    peers: [{ tokenSha256: sha256Hex('relay-token'), name: 'relay-1', sites: ['*'] }],
  });
  const e = await enrol(
    hub.store,
    { site: SITE, agent: AGENT, key: await publicKeyToText(agentPublicKey) },
    Date.now(),
  );
  if (!e.ok) throw new Error(e.error);
  const committed = new Map<string, { at: number; times: number }>();
  hub.ingest.onCommitted((c) => {
    const at = performance.now();
    for (const r of c.runs) {
      const prev = committed.get(r.runId);
      committed.set(r.runId, { at: prev?.at ?? at, times: (prev?.times ?? 0) + 1 });
    }
  });
  const hubLink = await startLink({
    name: 'relay-hub',
    target: { port: hubAddr.port },
    settings: hubLinkSettings,
    seed: 2,
  });

  const rc = relayConfig({
    name: 'relay-1',
    dataDir: tmp('relay'),
    listen: { port: 0 },
    sites: [SITE],
    forward: { idleMs: 1000, backoffBaseMs: 250, backoffMaxMs: 5000, ...relayForward },
  });
  if (!rc.ok) throw new Error(rc.errors.join('; '));
  const relay = createRelay(rc.value, [
    { name: 'hub', url: `http://127.0.0.1:${hubLink.port}`, token: 'relay-token', plan: { windows: [] } },
  ]);
  const relayAddr = await relay.start();
  const agentToken = relay.tokens.add(SITE, [SITE]);
  const agentLink = await startLink({
    name: 'agent-relay',
    target: { port: relayAddr.port },
    settings: link,
    seed: 1,
  });
  return {
    hub,
    relay,
    hubLink,
    agentLink,
    links: [agentLink, hubLink] as LinkHandle[],
    relayUrl: `http://127.0.0.1:${agentLink.port}`,
    /** The hub itself (hop and /api on one listener), not through a link. */
    hubUrl: `http://127.0.0.1:${hubAddr.port}`,
    agentToken,
    /** The relay's longest hold of a downlink pull (its `limits.maxHoldS`), seconds. */
    maxHoldS: rc.value.limits.maxHoldS,
    hubPublicKey: await publicKeyFromText(hub.publicKeyText),
    /** runId → first commit time (performance.now) and how many commits materialised it. */
    committed,
    async close() {
      await agentLink.close();
      await relay.stop();
      await hubLink.close();
      await hub.close();
    },
  };
}
