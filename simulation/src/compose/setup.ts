/**
 * The Compose topology's one-shot set-up step (service `setup`): keys, tokens, enrolment and every
 * node's config, written into the shared volumes through the programs' own CLIs (topology/setUp), with
 * URLs naming the link containers (`http://link-ship-7:7000`). Runs again as a no-op while the volumes
 * hold a finished set-up; `docker compose down -v` starts afresh.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { layout, setUp } from '../topology/setup.js';
import { COMPOSE, composeSpec } from './topology.js';

const say = (s: string) => process.stdout.write(`setup: ${s}\n`);
const spec = composeSpec();
const l = layout(spec.dir);
const volumes = [join(spec.dir, 'hub'), join(spec.dir, 'relay'), ...spec.sites.map((s) => l.siteDir(s.site))];
const done = (dir: string) => join(dir, COMPOSE.doneMarker);

const finished = volumes.filter((v) => existsSync(done(v)));
if (finished.length === volumes.length) {
  say(`already set up in ${spec.dir} (docker compose down -v to start afresh)`);
  process.exit(0);
}
if (finished.length > 0) {
  console.error(
    `setup: a half-finished set-up is in the volumes (${finished.join(', ')} done, others not); remove them with 'docker compose down -v' and start again`,
  );
  process.exit(1);
}

const siteLinks = Object.fromEntries(spec.sites.map((s) => [s.site, COMPOSE.link.port]));
await setUp(
  spec,
  { hub: COMPOSE.hub.port, relay: COMPOSE.relay.port, relayLink: COMPOSE.link.port, siteLinks },
  {
    listen: '0.0.0.0',
    relayLink: COMPOSE.relayLinkService,
    siteLink: (site) => COMPOSE.siteLinkService(site),
  },
);
for (const v of volumes) writeFileSync(done(v), `${new Date().toISOString()}\n`);
for (const s of spec.sites)
  say(
    `${s.site}: agent ${s.agent} enrolled, upstream http://${COMPOSE.siteLinkService(s.site)}:${COMPOSE.link.port} (${s.profile} ×${s.timeScale})`,
  );
say('done');
