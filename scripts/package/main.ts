/**
 * `npm run package`: the outpost's offline install for this machine's CPU in dist/, and a line per
 * target it cannot build here saying why.
 *
 *   npm run package                 dist/driftline-edge-<version>-linux-<arch>.tar.gz
 *   npm run package -- --out DIR    somewhere else
 */
import { join } from 'node:path';
import { buildPackage, ROOT } from './build.js';
import { cannotBuild, TARGETS } from './platform.js';

const HELP = `Usage: npm run package -- [--out DIR]

Builds the outpost's offline install (edge-agent and relay, with their own Node) for this machine's CPU,
and prints a line per other target saying why it cannot be built here.

Options:
  --out DIR   where the tarball goes (default dist/ in the checkout)
  -h, --help  print this help and build nothing

Example:
  npm run package -- --out /tmp/driftline-package
`;
const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  process.stdout.write(HELP);
  process.exit(0);
}
const unknown = args.filter((a, n) => a !== '--out' && args[n - 1] !== '--out');
if (unknown.length > 0) {
  process.stderr.write(`package: unknown argument ${unknown[0]}\n\n${HELP}`);
  process.exit(2);
}
const i = process.argv.indexOf('--out');
const outDir = i > 0 && process.argv[i + 1] ? process.argv[i + 1]! : join(ROOT, 'dist');
const mb = (n: number) => `${(n / 1048576).toFixed(1)} MB`;

let built = 0;
for (const t of TARGETS) {
  const why = cannotBuild(t);
  if (why) {
    console.log(`linux-${t.tarballArch}: skipped: ${why}`);
    continue;
  }
  const r = await buildPackage(t, outDir);
  built++;
  console.log(
    `linux-${t.tarballArch}: ${r.tarball} (${mb(r.tarballBytes)}; ${mb(r.unpackedBytes)} unpacked; needs glibc ${r.glibcMin} or newer)`,
  );
}
if (built === 0) {
  console.error('package: nothing was built (see the lines above)');
  process.exit(1);
}
