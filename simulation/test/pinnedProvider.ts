import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { writeZip } from '@driftline/edge-agent/testing';
import { layOutTestProvider, TESTOBJ_HOST, TESTOBJ_SOURCE, TESTOBJ_VERSION } from '../provider/mirror.js';
import { realPath } from './realTerraform.js';

/** A provider build a PR pins in its lock file, laid out as `terraform providers mirror` packs it. */
export interface PinnedProvider {
  address: string;
  version: string;
  /** The need a site lacking it reports: `<address> <version> <platform>`. */
  need: string;
  /** The packed mirror at headquarters (`hub mirror publish --dir`). */
  mirrorDir: string;
  /** Where the build lands under a site's provider mirror. */
  zipPath: string;
  lockText: string;
  /** HCL of a stack that uses it (real terraform only), and what its plan finds. */
  stack?: string;
}

export const PLATFORM = `linux_${process.arch === 'arm64' ? 'arm64' : 'amd64'}`;

/** A stand-in zip for the fake terraform, which only installs it (never runs it). */
export function fakeAws(dir: string): PinnedProvider {
  const address = 'registry.terraform.io/hashicorp/aws';
  const mirrorDir = join(dir, 'mirror');
  const zipPath = join(address, `terraform-provider-aws_5.31.0_${PLATFORM}.zip`);
  mkdirSync(join(mirrorDir, address), { recursive: true });
  const zip = writeZip([
    { name: 'terraform-provider-aws_v5.31.0_x5', data: '#!/bin/sh\necho fake provider\n' },
  ]);
  writeFileSync(join(mirrorDir, zipPath), zip);
  const zh = createHash('sha256').update(zip).digest('hex');
  const lockText = `provider "${address}" {\n  version = "5.31.0"\n  hashes = [\n    "zh:${zh}",\n  ]\n}\n`;
  return { address, version: '5.31.0', need: `${address} 5.31.0 ${PLATFORM}`, mirrorDir, zipPath, lockText };
}

/** The environment the real terraform needs to run the test provider (simulation/provider). */
export const testProviderEnv = (dir: string) => ({
  TF_DISABLE_PLUGIN_TLS: '1',
  DRIFTLINE_TESTOBJ_FILE: join(dir, 'testobj', 'objects.json'),
});

/**
 * The repository's test provider (driftline/testobj, which the real terraform runs) packed as a mirror
 * zip, with a lock file holding both its `zh:` (the zip) and `h1:` (the unpacked contents, as the real
 * terraform computes it) hashes, so `init -lockfile=readonly` installs it from a site's mirror.
 */
export function testObjProvider(dir: string): PinnedProvider {
  const root = join(dir, 'testobj');
  const tp = layOutTestProvider(root, { objectsFile: testProviderEnv(dir).DRIFTLINE_TESTOBJ_FILE });
  const address = `${TESTOBJ_HOST}/${TESTOBJ_SOURCE}`;
  const mirrorDir = join(dir, 'mirror');
  const zipPath = join(address, `terraform-provider-testobj_${TESTOBJ_VERSION}_${PLATFORM}.zip`);
  mkdirSync(join(mirrorDir, address), { recursive: true });
  // The launcher keeps its executable bit in the zip: terraform runs it once it unpacks the build.
  const zip = writeZip([
    { name: basename(tp.executable), data: readFileSync(tp.executable, 'utf8'), mode: 0o755 },
  ]);
  writeFileSync(join(mirrorDir, zipPath), zip);
  const zh = createHash('sha256').update(zip).digest('hex');
  const stack = `terraform {\n  required_providers {\n    driftline = { source = "${TESTOBJ_SOURCE}", version = "${TESTOBJ_VERSION}" }\n  }\n}\nresource "driftline_object" "dns" { name = "dns" }\n`;
  const probe = join(root, 'lock-probe');
  mkdirSync(probe, { recursive: true });
  writeFileSync(join(probe, 'main.tf'), stack);
  const rc = join(probe, 'terraformrc');
  writeFileSync(
    rc,
    `provider_installation {\n  filesystem_mirror {\n    path = ${JSON.stringify(mirrorDir)}\n  }\n  direct {\n    exclude = ["*/*/*"]\n  }\n}\n`,
  );
  execFileSync('terraform', ['init', '-input=false', '-no-color'], {
    cwd: probe,
    env: { PATH: realPath(), HOME: probe, TF_CLI_CONFIG_FILE: rc, CHECKPOINT_DISABLE: '1' },
    stdio: 'ignore',
  });
  const h1 = /"(h1:[A-Za-z0-9+/=]+)"/.exec(readFileSync(join(probe, '.terraform.lock.hcl'), 'utf8'))?.[1];
  if (!h1) throw new Error('terraform init recorded no h1: hash for the test provider');
  const lockText = `provider "${address}" {\n  version = "${TESTOBJ_VERSION}"\n  hashes = [\n    "${h1}",\n    "zh:${zh}",\n  ]\n}\n`;
  return {
    address,
    version: TESTOBJ_VERSION,
    need: `${address} ${TESTOBJ_VERSION} ${PLATFORM}`,
    mirrorDir,
    zipPath,
    lockText,
    stack,
  };
}
