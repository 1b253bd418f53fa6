/**
 * `npm start`: the Driftline demo. Hub (with dashboard), one relay, and a fleet: three sites on
 * different time-compressed links, each planning every component of `DEMO_COMPONENTS` in every
 * environment (topology/spec.ts lists them) with the fake terraform's changing plans; all on 127.0.0.1.
 * `npm start -- --terraform=real` (or DRIFTLINE_TERRAFORM=real) plans with the real terraform on PATH
 * instead: `terraform_data` stacks written into the demo dir (topology/realStacks.ts), offline.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { addDemoApprover, demoApproverKey, publishDemoSource } from './topology/demoSource.js';
import { ROOT } from './topology/programs.js';
import { realToolEnv } from './topology/realStacks.js';
import {
  DEMO_COMPONENTS,
  DEMO_ENVIRONMENTS,
  DEMO_PR_REF,
  DEMO_SITES,
  DEMO_SOURCE,
  demoSpec,
} from './topology/spec.js';
import { Topology } from './topology/Topology.js';

const dir = resolve(process.env.DRIFTLINE_DEMO_DIR ?? join(ROOT, '.driftline', 'demo'));
const uiDir = join(ROOT, 'ui', 'dist');
const say = (s: string) => process.stdout.write(`${s}\n`);

const USAGE = `Usage: npm start [-- --terraform=fake|real]

Starts the demo: hub (with the dashboard), a relay and a fleet at three sites behind emulated links,
all on 127.0.0.1, until Ctrl-C. Data and logs in .driftline/demo (DRIFTLINE_DEMO_DIR), wiped at start.

  --terraform=fake   the simulation's fake terraform, replayed plans (default; fast, deterministic)
  --terraform=real   the real terraform on PATH plans terraform_data stacks written into the demo dir
                     (no provider to install, works offline); also DRIFTLINE_TERRAFORM=real
  --help             this text

Environment: DRIFTLINE_DEMO_HOLD_LOCK=<site>/<environment>/<component> (e.g. ship-7/prod/database)
holds that cell's state lock from its third plan on, so it shows a stuck lock (the fake terraform only).

Example:
  npm start -- --terraform=real
`;
const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const toolArg = args.find((a) => a.startsWith('--terraform='))?.slice('--terraform='.length);
const unknown = args.filter((a) => !a.startsWith('--terraform='));
const terraform = toolArg ?? process.env.DRIFTLINE_TERRAFORM ?? 'fake';
if (unknown.length > 0 || (terraform !== 'fake' && terraform !== 'real')) {
  process.stderr.write(
    `${unknown.length > 0 ? `unknown argument ${unknown[0]}` : `--terraform=${terraform}: give fake or real`}\n\n${USAGE}`,
  );
  process.exit(2);
}
const heldLock = process.env.DRIFTLINE_DEMO_HOLD_LOCK || undefined;
if (heldLock) {
  const [site, environment, component, ...rest] = heldLock.split('/');
  const cell =
    rest.length === 0 &&
    DEMO_SITES.some((s) => s.site === site) &&
    DEMO_ENVIRONMENTS.includes(environment ?? '') &&
    DEMO_COMPONENTS.some((c) => c.name === component);
  if (!cell || terraform !== 'fake') {
    process.stderr.write(
      `DRIFTLINE_DEMO_HOLD_LOCK=${heldLock}: ${cell ? 'holds a lock of the fake terraform only' : 'give a cell of the demo as <site>/<environment>/<component>, e.g. ship-7/prod/database'}\n`,
    );
    process.exit(2);
  }
}
if (terraform === 'real') {
  const v = spawnSync('terraform', ['version'], { env: realToolEnv(ROOT), encoding: 'utf8' });
  if (v.status !== 0) {
    process.stderr.write(
      'the demo on the real terraform needs `terraform` on PATH (Terraform 1.5 or later); install it, or run `npm start` for the fake\n',
    );
    process.exit(2);
  }
  say(`terraform: ${v.stdout.split('\n')[0]} (the real binary; cells plan terraform_data stacks)`);
}

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
// The approver's key exists before the agents start: ship-7 pins it for the component it may apply.
const approver = await demoApproverKey(dir).catch((e: Error) => {
  say(`warning: no approver key (${e.message.split('\n')[0]}); apply stays off in the demo`);
  return null;
});
const spec = {
  ...demoSpec(dir, { approverKey: approver?.publicKey, terraform }),
  uiDir,
  hubPort: Number(process.env.DRIFTLINE_HUB_PORT ?? 0),
  ...(heldLock ? { heldLock } : {}),
};
const cells = spec.sites.reduce((n, s) => n + s.components.reduce((m, c) => m + c.environments.length, 0), 0);
say(`starting the demo in ${dir} (logs in ${join(dir, 'logs')})…`);
say(
  `fleet: ${cells} cells (${DEMO_COMPONENTS.length} components × ${DEMO_ENVIRONMENTS.length} environments at ${spec.sites.length} sites, and ${DEMO_SOURCE.name} at ${DEMO_SOURCE.site} from headquarters' git)`,
);
if (heldLock) say(`holding the state lock of ${heldLock} from its third plan on (DRIFTLINE_DEMO_HOLD_LOCK)`);
const topo = await Topology.start(spec, say);
for (const s of spec.sites)
  say(
    `  ${s.site.padEnd(10)} link ${s.profile} ×${s.timeScale}, control ${topo.links.get(s.site)?.control.url}`,
  );
say(`Dashboard: ${topo.hubUrl}`);
say(`Relay: ${topo.relayUrl}`);
say(`Sign in: ${topo.signInUrl}`);
try {
  const repo = await publishDemoSource(dir, topo.layout.hubConfig, topo.hubUrl, terraform);
  say(
    `PR plans: ${topo.hubUrl}/?ref=${DEMO_PR_REF} (${DEMO_SOURCE.name}: main and ${DEMO_PR_REF} of ${repo}, sent to ${DEMO_SOURCE.site} as a git bundle)`,
  );
  if (approver) {
    const tokenFile = await addDemoApprover(dir, topo.layout.hubConfig, approver.publicKey);
    say(
      `Approve: npx hub approve --key ${approver.keyFile} --run <runId> --hub ${topo.hubUrl} --token-file ${tokenFile}   (${DEMO_SOURCE.name}/prod at ${DEMO_SOURCE.site} applies what you approve; its run id is in the run view)`,
    );
  }
} catch (e) {
  say(
    `warning: publishing the demo repository failed (${(e as Error).message.split('\n')[0]}); the PR view stays empty`,
  );
}
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
