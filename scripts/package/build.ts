/**
 * The offline install of the outpost's programs: `dist/driftline-edge-<version>-linux-<arch>.tar.gz`
 * holding the agent and the relay bundled, their native and wasm parts, the Node runtime that built
 * them, launchers, systemd units, example configs, an install text, VERSION and SHA256SUMS
 * (docs/decisions/110-packaging.md).
 */
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundlePrograms, PROGRAMS } from './bundle.js';
import { packagedExample, SHIPPED_DOCS } from './docs.js';
import { cannotBuild, minGlibc, type Target } from './platform.js';
import { deterministicTarGz, normaliseModes, treeBytes, writeSums } from './tarball.js';

/** The checkout this script belongs to. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Node flags every launcher passes: a 1 MB semi-space (V8's default grows to 16 MB each; the daemons'
 * garbage is short-lived Automerge patches) and one V8 worker thread. No old-space cap: a plan JSON of
 * `limits.maxPlanBytes` needs the heap. Measurements: docs/decisions/110-packaging.md.
 */
export const NODE_FLAGS: string[] = ['--max-semi-space-size=1', '--v8-pool-size=1'];

/** What `buildPackage` made. */
export interface PackageResult {
  name: string;
  version: string;
  tarball: string;
  tarballBytes: number;
  unpackedBytes: number;
  glibcMin: string;
  bundleBytes: Record<string, number>;
}

/** The version every packed program carries (their package.json files must agree). */
export function packageVersion(root = ROOT): string {
  const versions = PROGRAMS.map(
    (p) =>
      (JSON.parse(readFileSync(join(root, p.name, 'package.json'), 'utf8')) as { version: string }).version,
  );
  if (new Set(versions).size !== 1)
    throw new Error(
      `edge-agent and relay carry different versions (${versions.join(', ')}); set the same version in both package.json files`,
    );
  return versions[0]!;
}

/** Seconds since the epoch stamped on every entry: SOURCE_DATE_EPOCH, else the HEAD commit's time. */
function sourceDate(root: string): number {
  const env = Number(process.env.SOURCE_DATE_EPOCH);
  if (Number.isInteger(env) && env >= 0) return env;
  const r = spawnSync('git', ['log', '-1', '--format=%ct'], { cwd: root, encoding: 'utf8' });
  const t = Number(r.stdout?.trim());
  return r.status === 0 && Number.isInteger(t) ? t : 0;
}

const fill = (template: string, values: Record<string, string>) =>
  template.replace(/@([A-Z_]+)@/g, (m, k: string) => values[k] ?? m);

/** Builds the package for `target` into `outDir`; throws when the target cannot be built here. */
export async function buildPackage(
  target: Target,
  outDir = join(ROOT, 'dist'),
  root = ROOT,
): Promise<PackageResult> {
  const why = cannotBuild(target);
  if (why) throw new Error(`linux-${target.tarballArch}: ${why}`);
  const version = packageVersion(root);
  const name = `driftline-edge-${version}-linux-${target.tarballArch}`;
  const stage = mkdtempSync(join(tmpdir(), 'driftline-package-'));
  try {
    for (const d of ['bin', 'lib', 'node/bin', 'systemd', 'examples/schema'])
      mkdirSync(join(stage, d), { recursive: true });
    const bundleBytes = await bundlePrograms(root, join(stage, 'lib'));
    copyFileSync(process.execPath, join(stage, 'node/bin/node'));
    const nodeLicense = [
      join(dirname(process.execPath), '../share/doc/node/LICENSE'),
      '/usr/share/doc/nodejs/LICENSE',
    ].find(existsSync);
    if (nodeLicense) copyFileSync(nodeLicense, join(stage, 'node/LICENSE'));
    const glibcMin = minGlibc([
      join(stage, 'node/bin/node'),
      join(stage, 'lib/better_sqlite3.node'),
      join(stage, 'lib/cbor_extract.node'),
    ]);
    const launcher = readFileSync(join(root, 'packaging/launcher.sh'), 'utf8');
    for (const p of PROGRAMS)
      writeFileSync(
        join(stage, 'bin', p.name),
        fill(launcher, {
          PROGRAM: p.name,
          BUNDLE: p.bundle,
          ARCH: target.unameM,
          GLIBC_MIN: glibcMin,
          NODE_FLAGS: [...NODE_FLAGS, ...p.flags].join(' '),
        }),
      );
    for (const u of [
      'driftline-edge-agent.service',
      'driftline-relay.service',
      'driftline-edge-agent-switch.path',
      'driftline-edge-agent-switch.service',
    ])
      copyFileSync(join(root, 'packaging/systemd', u), join(stage, 'systemd', u));
    for (const c of ['agent', 'relay']) {
      writeFileSync(
        join(stage, 'examples', `${c}.yaml`),
        packagedExample(readFileSync(join(root, 'examples', `${c}.yaml`), 'utf8')),
      );
      copyFileSync(
        join(root, 'examples/schema', `${c}.schema.json`),
        join(stage, 'examples/schema', `${c}.schema.json`),
      );
    }
    // the code the example agent.yaml plans (`./infra/network`): a real Terraform plans it offline
    mkdirSync(join(stage, 'examples/infra/network'), { recursive: true });
    copyFileSync(join(root, 'examples/infra/network/main.tf'), join(stage, 'examples/infra/network/main.tf'));
    for (const d of SHIPPED_DOCS) {
      mkdirSync(dirname(join(stage, d)), { recursive: true });
      copyFileSync(join(root, d), join(stage, d));
    }
    const values = {
      VERSION: version,
      ARCH: target.unameM,
      TARBALL: `${name}.tar.gz`,
      GLIBC_MIN: glibcMin,
      NODE_VERSION: process.version,
    };
    writeFileSync(
      join(stage, 'INSTALL.md'),
      fill(readFileSync(join(root, 'packaging/INSTALL.md'), 'utf8'), values),
    );
    writeFileSync(join(stage, 'VERSION'), `${version}\n`);
    normaliseModes(stage, ['bin/edge-agent', 'bin/relay', 'node/bin/node']);
    writeSums(stage);
    const unpackedBytes = treeBytes(stage);
    mkdirSync(outDir, { recursive: true });
    const tarball = join(outDir, `${name}.tar.gz`);
    await deterministicTarGz(stage, tarball, sourceDate(root));
    return {
      name,
      version,
      tarball,
      tarballBytes: statSync(tarball).size,
      unpackedBytes,
      glibcMin,
      bundleBytes,
    };
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}
