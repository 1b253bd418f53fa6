/**
 * `npm start`: the Driftline demo. Hub (with dashboard), one relay, three agents at three sites on
 * different time-compressed links, fake terraform producing changing plans; all on 127.0.0.1.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ROOT } from './topology/programs.js';
import { demoSpec } from './topology/spec.js';
import { Topology } from './topology/Topology.js';

const dir = resolve(process.env.DRIFTLINE_DEMO_DIR ?? join(ROOT, '.driftline', 'demo'));
const uiDir = join(ROOT, 'ui', 'dist');
const say = (s: string) => process.stdout.write(`${s}\n`);

// Always rebuild (about a second): a stale build would show yesterday's dashboard.
say('building the dashboard (ui/dist)…');
const build = spawnSync('npm', ['run', 'build', '-w', '@driftline/ui'], {
  cwd: ROOT,
  stdio: ['ignore', 'ignore', 'inherit'],
});
if (build.status !== 0 && !existsSync(join(uiDir, 'index.html'))) {
  say('warning: the dashboard build failed; the hub serves its API and a text page at /');
}
rmSync(dir, { recursive: true, force: true });
const spec = { ...demoSpec(dir), uiDir, hubPort: Number(process.env.DRIFTLINE_HUB_PORT ?? 0) };
say(`starting the demo in ${dir} (logs in ${join(dir, 'logs')})…`);
const topo = await Topology.start(spec, say);
for (const s of spec.sites)
  say(
    `  ${s.site.padEnd(10)} link ${s.profile} ×${s.timeScale}, control ${topo.links.get(s.site)?.control.url}`,
  );
say(`Dashboard: ${topo.hubUrl}`);
say(`Relay: ${topo.relayUrl}`);
say(`Sign in: ${topo.signInUrl}`);
say('Ctrl-C stops everything.');

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  say('stopping…');
  await topo.stop();
  say(`stopped; data kept in ${dir}`);
  process.exit(0);
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
