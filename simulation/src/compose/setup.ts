/**
 * The Compose topology's one-shot set-up step (service `setup`): keys, tokens, enrolment, the admin
 * user and every node's config, written into the shared volumes through the programs' own CLIs
 * (topology/setUp), with URLs naming the link containers (`http://link-ship-7:7000`). Prints the
 * dashboard's sign-in URL (`docker compose logs setup` shows it again). Runs again as a no-op, printing
 * that URL once more, while the volumes hold a finished set-up; `docker compose down -v` starts afresh.
 * Prints each CLI run as it starts and ends, and tries once more from emptied volumes when a run fails
 * or hangs (each is bounded): nothing has used the volumes before set-up finishes, every service waits
 * for it.
 */
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { layout, setUp, signInUrl } from '../topology/setup.js';
import { COMPOSE, composeSpec } from './topology.js';

const say = (s: string) => process.stdout.write(`setup: ${s}\n`);
const spec = composeSpec();
const l = layout(spec.dir);
const volumes = [join(spec.dir, 'hub'), join(spec.dir, 'relay'), ...spec.sites.map((s) => l.siteDir(s.site))];
const done = (dir: string) => join(dir, COMPOSE.doneMarker);
/** The same line `npm start` prints; the compose test and scripts/docker/up.sh read it from the logs. */
const signIn = (token: string) => say(`Sign in: ${signInUrl(COMPOSE.dashboardUrl, token)}`);

const finished = volumes.filter((v) => existsSync(done(v)));
if (finished.length === volumes.length) {
  say(`already set up in ${spec.dir} (docker compose down -v to start afresh)`);
  signIn(readFileSync(l.adminToken, 'utf8').trim());
  process.exit(0);
}
if (finished.length > 0) {
  console.error(
    `setup: a half-finished set-up is in the volumes (${finished.join(', ')} done, others not); remove them with 'docker compose down -v' and start again`,
  );
  process.exit(1);
}

const siteLinks = Object.fromEntries(spec.sites.map((s) => [s.site, COMPOSE.link.port]));
const attempt = () =>
  setUp(
    spec,
    { hub: COMPOSE.hub.port, relay: COMPOSE.relay.port, relayLink: COMPOSE.link.port, siteLinks },
    {
      listen: '0.0.0.0',
      relayLink: COMPOSE.relayLinkService,
      siteLink: (site) => COMPOSE.siteLinkService(site),
    },
    { progress: say },
  );
let adminToken: string;
try {
  ({ adminToken } = await attempt());
} catch (e) {
  say(`failed: ${(e as Error).message}`);
  say('emptying the volumes and starting again, once');
  for (const v of volumes)
    for (const entry of readdirSync(v)) rmSync(join(v, entry), { recursive: true, force: true });
  try {
    ({ adminToken } = await attempt());
  } catch (e2) {
    console.error(`setup: failed again: ${(e2 as Error).message}`);
    process.exit(1);
  }
}
for (const v of volumes) writeFileSync(done(v), `${new Date().toISOString()}\n`);
for (const s of spec.sites)
  say(
    `${s.site}: agent ${s.agent} enrolled, upstream http://${COMPOSE.siteLinkService(s.site)}:${COMPOSE.link.port} (${s.profile} ×${s.timeScale})`,
  );
signIn(adminToken);
say('done');
