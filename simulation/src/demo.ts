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

if (!existsSync(join(uiDir, 'index.html')) || process.env.DRIFTLINE_REBUILD_UI === '1') {
  say('building the dashboard (ui/dist)…');
  const b = spawnSync('npm', ['run', 'build', '-w', '@driftline/ui'], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (b.status !== 0) say('warning: the dashboard build failed; the hub will serve its API and a text page');
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
