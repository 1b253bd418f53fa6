// `npm install` at the root builds the dashboard the hub serves (ui/dist), so no separate build step
// exists for an operator to miss (issue 30; docs/decisions/250-one-config-loader.md). Where the sources
// are not there yet (the Dockerfile's `npm ci` layer sees only package.json files) it says so and skips.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
if (!existsSync(join(root, 'ui', 'src', 'main.tsx')) || !existsSync(join(root, 'ui', 'index.html'))) {
  console.error('prepare: no ui sources here (only manifests): the dashboard is not built now');
  process.exit(0);
}
const npm = process.env.npm_execpath ? [process.execPath, [process.env.npm_execpath]] : ['npm', []];
const r = spawnSync(npm[0], [...npm[1], 'run', 'build', '-w', '@driftline/ui'], {
  cwd: root,
  stdio: 'inherit',
});
if (r.status !== 0) {
  console.error(
    'prepare: the dashboard (ui/dist) did not build; the hub would answer / with a text page. Fix the error above and run npm install again (or npm run build -w @driftline/ui).',
  );
  process.exit(r.status ?? 1);
}
