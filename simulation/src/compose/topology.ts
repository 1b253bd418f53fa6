import { demoSpec, type TopologySpec } from '../topology/spec.js';

/**
 * The Compose topology (root docker-compose.yml): the `npm start` demo's sites and links, with fixed
 * ports and service names instead of free ports on 127.0.0.1. The compose test checks that
 * docker-compose.yml declares exactly these services.
 */
export const COMPOSE = {
  /** Root of the shared volumes inside every container. */
  dataDir: '/data',
  /** The built dashboard inside the image. */
  uiDir: '/app/ui/dist',
  hub: { service: 'hub', port: 8080 },
  /** Where docker-compose.yml publishes the dashboard on the host. */
  dashboardUrl: 'http://127.0.0.1:8080',
  relay: { service: 'relay', port: 8443 },
  /** Every link container listens here and serves its control API on `controlPort`. */
  link: { port: 7000, controlPort: 7001 },
  /** The relay→hub link's service. */
  relayLinkService: 'link-hub',
  /** A site's agent→relay link and its agent. */
  siteLinkService: (site: string) => `link-${site}`,
  agentService: (site: string) => `agent-${site}`,
  /** Written in every volume once the set-up step has finished. */
  doneMarker: '.setup-done',
} as const;

/**
 * The demo's fleet in containers, without the component headquarters delivers as git bundles: nothing
 * publishes its repository in Compose, so it would only ever be blocked.
 */
export function composeSpec(): TopologySpec {
  const demo = demoSpec(COMPOSE.dataDir);
  return {
    ...demo,
    sites: demo.sites.map((s) => ({ ...s, components: s.components.filter((c) => !c.source) })),
    uiDir: COMPOSE.uiDir,
    hubPort: COMPOSE.hub.port,
    relayPort: COMPOSE.relay.port,
  };
}
