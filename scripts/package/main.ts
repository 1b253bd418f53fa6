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
