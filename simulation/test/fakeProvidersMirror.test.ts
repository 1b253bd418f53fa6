import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliConfig, layOutTestProvider } from '../provider/mirror.js';
import { readZipEntries } from '../src/adapters/fs/providerMirrorFiles.js';
import { hashV1 } from '../src/core/terraform/providersMirror.js';

const BIN = new URL('../bin/terraform', import.meta.url).pathname;
const root = mkdtempSync(join(tmpdir(), 'fake-tf-mirror-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const provider = layOutTestProvider(join(root, 'provider'), { objectsFile: join(root, 'objects.json') });
const PKG_DIR = 'registry.terraform.io/driftline/testobj';
const ZIP = 'terraform-provider-testobj_0.1.0_linux_amd64.zip';

function fake(cwd: string, env: Record<string, string>, ...args: string[]) {
  const r = spawnSync(BIN, args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, FAKE_TERRAFORM_PLATFORM: 'linux_amd64', TF_CLI_CONFIG_FILE: '', ...env },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function workDir(name: string): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'fake-terraform.yaml'),
    'providers: ["driftline/testobj 0.1.0"]\nsteps: [{ state: clean }]\n',
  );
  return dir;
}

/** The real terraform on PATH (not the fake), or why there is none. */
function realTerraform(): { ok: true; path: string } | { ok: false; reason: string } {
  const path = (process.env.PATH ?? '')
    .split(delimiter)
    .filter((d) => d && resolve(d) !== resolve(BIN, '..'))
    .join(delimiter);
  try {
    execFileSync('terraform', ['version'], { env: { PATH: path, CHECKPOINT_DISABLE: '1' }, stdio: 'ignore' });
    return { ok: true, path };
  } catch (e) {
    return { ok: false, reason: `no usable terraform on PATH (${(e as Error).message.split('\n')[0]})` };
  }
}

describe('fake terraform providers mirror', () => {
  it('writes the packed layout and the network-mirror JSON indexes, as Terraform 1.11 does', () => {
    const dir = workDir('mirror');
    const r = fake(
      dir,
      { FAKE_TERRAFORM_PROVIDER_CACHE: provider.mirrorDir },
      'providers',
      'mirror',
      '-platform=linux_amd64',
      'out',
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      '- Mirroring driftline/testobj...\n  - Selected v0.1.0 to meet constraints 0.1.0\n  - Downloading package for linux_amd64...\n',
    );
    const out = join(dir, 'out', PKG_DIR);
    expect(readdirSync(out).sort()).toEqual(['0.1.0.json', 'index.json', ZIP]);
    const entries = readZipEntries(join(out, ZIP));
    expect(entries.map((e) => e.name)).toEqual(['terraform-provider-testobj_v0.1.0']);
    expect(entries[0]?.data.equals(readFileSync(provider.executable))).toBe(true);
    // Go's json.MarshalIndent: two spaces, keys sorted, no trailing newline.
    expect(readFileSync(join(out, 'index.json'), 'utf8')).toBe('{\n  "versions": {\n    "0.1.0": {}\n  }\n}');
    const h1 = hashV1(entries);
    expect(readFileSync(join(out, '0.1.0.json'), 'utf8')).toBe(
      `{\n  "archives": {\n    "linux_amd64": {\n      "hashes": [\n        "${h1}"\n      ],\n      "url": "${ZIP}"\n    }\n  }\n}`,
    );
  });

  it('fails offline without a provider cache, in Terraform\u2019s words', () => {
    const dir = workDir('offline');
    const r = fake(dir, { FAKE_TERRAFORM_PROVIDER_CACHE: '' }, 'providers', 'mirror', 'out');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Error: Provider not available');
    expect(r.stderr).toContain(
      'Failed to download registry.terraform.io/driftline/testobj from its origin registry: could not connect to registry.terraform.io',
    );
  });

  const real = realTerraform();
  const requireReal = process.env.DRIFTLINE_REQUIRE_TERRAFORM === '1';
  it.skipIf(!real.ok && !requireReal)(
    `is a mirror the real terraform installs from, with the h1 hash it records${real.ok ? '' : ` (skipped: ${real.reason})`}`,
    { timeout: 120_000 },
    () => {
      if (!real.ok) throw new Error(`${real.reason}: install terraform or unset DRIFTLINE_REQUIRE_TERRAFORM`);
      const dir = workDir('real');
      expect(
        fake(dir, { FAKE_TERRAFORM_PROVIDER_CACHE: provider.mirrorDir }, 'providers', 'mirror', 'packed')
          .code,
      ).toBe(0);
      const rc = join(dir, 'terraformrc');
      writeFileSync(rc, cliConfig(join(dir, 'packed')));
      writeFileSync(
        join(dir, 'main.tf'),
        'terraform {\n  required_providers {\n    driftline = { source = "driftline/testobj", version = "0.1.0" }\n  }\n}\n',
      );
      const init = spawnSync('terraform', ['init', '-input=false', '-no-color'], {
        cwd: dir,
        encoding: 'utf8',
        env: { PATH: real.path, HOME: dir, CHECKPOINT_DISABLE: '1', TF_CLI_CONFIG_FILE: rc },
      });
      expect(init.stderr).toBe('');
      expect(init.status).toBe(0);
      const index = JSON.parse(readFileSync(join(dir, 'packed', PKG_DIR, '0.1.0.json'), 'utf8'));
      const h1 = index.archives.linux_amd64.hashes[0];
      expect(readFileSync(join(dir, '.terraform.lock.hcl'), 'utf8')).toContain(`"${h1}"`);
    },
  );
});
