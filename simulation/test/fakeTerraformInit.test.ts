import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packedZipPath } from '@driftline/protocol';
import { afterAll, describe, expect, it } from 'vitest';

const BIN = new URL('../bin/terraform', import.meta.url).pathname;
const root = mkdtempSync(join(tmpdir(), 'fake-tf-init-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const AWS = 'registry.terraform.io/hashicorp/aws';
const ZIP = Buffer.from('PK\u0005\u0006 stands in for terraform-provider-aws_5.31.0_linux_amd64.zip');
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const PLAN = ['plan', '-input=false', '-no-color', '-out=tf.plan', '-detailed-exitcode'];
const INIT = ['init', '-input=false', '-no-color', '-lockfile=readonly'];

function tf(cwd: string, env: Record<string, string>, ...args: string[]) {
  const r = spawnSync(BIN, args, {
    cwd,
    encoding: 'utf8',
    timeout: 30_000,
    env: {
      ...process.env,
      FAKE_TERRAFORM_PLATFORM: 'linux_amd64',
      FAKE_TERRAFORM_NETWORK: '',
      TF_CLI_CONFIG_FILE: '',
      TF_DATA_DIR: '',
      ...env,
    },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function lockFile(zh: string): string {
  return `# This file is maintained automatically by "terraform init".\nprovider "${AWS}" {\n  version     = "5.31.0"\n  constraints = "~> 5.31"\n  hashes = [\n    "zh:${zh}",\n  ]\n}\n`;
}

/** A component working directory with a scenario and a lock file, and a CLI config naming `mirror`. */
function site(name: string, zh = sha(ZIP)) {
  const dir = join(root, name, 'work');
  const mirror = join(root, name, 'mirror');
  mkdirSync(dir, { recursive: true });
  mkdirSync(mirror, { recursive: true });
  writeFileSync(join(dir, 'fake-terraform.yaml'), 'environment: prod\nsteps:\n  - state: changes\n');
  writeFileSync(join(dir, '.terraform.lock.hcl'), lockFile(zh));
  const cli = join(root, name, 'offline.tfrc');
  writeFileSync(
    cli,
    `provider_installation {\n  filesystem_mirror {\n    path = "${mirror}"\n  }\n  direct {\n    exclude = ["*/*/*"]\n  }\n}\n`,
  );
  const put = (bytes = ZIP) => {
    const p = join(mirror, packedZipPath(AWS, '5.31.0', 'linux_amd64'));
    mkdirSync(join(p, '..'), { recursive: true });
    writeFileSync(p, bytes);
  };
  return { dir, mirror, env: { TF_CLI_CONFIG_FILE: cli }, put };
}

describe('simulation/bin/terraform init (a real executable, offline)', () => {
  it('fails init and plan while the mirror lacks the locked provider, and plans once it is delivered', () => {
    const s = site('deliver');
    const init = tf(s.dir, s.env, ...INIT);
    expect(init.code).toBe(1);
    expect(init.stderr).toContain('│ Error: Failed to query available provider packages');
    expect(init.stderr).toContain(
      `provider registry.terraform.io/hashicorp/aws was not found in any of the search locations\n│\n│   - ${s.mirror}\n`,
    );
    const blocked = tf(s.dir, s.env, ...PLAN);
    expect(blocked.code).toBe(1);
    expect(blocked.stderr).toContain('│ Error: Required plugins are not installed');
    expect(blocked.stderr).toContain(`there is no package for ${AWS} 5.31.0 cached in .terraform/providers`);
    expect(existsSync(join(s.dir, 'tf.plan'))).toBe(false);

    s.put();
    const again = tf(s.dir, s.env, ...INIT);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('- Installed hashicorp/aws v5.31.0 (verified checksum)');
    expect(JSON.parse(readFileSync(join(s.dir, '.terraform/fake-terraform-providers.json'), 'utf8'))).toEqual(
      {
        installed: [{ address: AWS, version: '5.31.0', platform: 'linux_amd64' }],
      },
    );
    const planned = tf(s.dir, s.env, ...PLAN);
    expect(planned.code).toBe(2);
    expect(planned.stdout).toMatch(/Plan: \d+ to add/);
  }, 120_000);

  it("refuses a zip whose sha256 is not in the lock file's zh: hashes, and keeps TF_DATA_DIR", () => {
    const s = site('tampered', 'f'.repeat(64));
    s.put();
    const data = join(root, 'tampered', 'data');
    const init = tf(s.dir, { ...s.env, TF_DATA_DIR: data }, ...INIT);
    expect(init.code).toBe(1);
    expect(init.stderr).toContain('│ Error: Failed to install provider');
    expect(init.stderr).toContain(
      "doesn't match any of the checksums previously recorded in the dependency lock file",
    );
    expect(existsSync(data)).toBe(false);
  }, 60_000);

  it('fails like an offline registry without a provider_installation block, and installs with a network', () => {
    const s = site('direct');
    const offline = tf(s.dir, { TF_CLI_CONFIG_FILE: join(root, 'no-such.tfrc') }, ...INIT);
    expect(offline.code).toBe(1);
    expect(offline.stderr).toContain(
      'could not connect to registry.terraform.io: failed to request discovery document',
    );
    expect(tf(s.dir, { FAKE_TERRAFORM_NETWORK: '1' }, ...INIT).code).toBe(0);
  }, 60_000);

  it('refuses a lock file that does not parse, naming the line', () => {
    const s = site('broken-lock');
    writeFileSync(join(s.dir, '.terraform.lock.hcl'), `provider "${AWS}" {\n  version = "5.31.0"\n`);
    const r = tf(s.dir, s.env, ...INIT);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Invalid dependency lock file');
    expect(r.stderr).toContain(
      '.terraform.lock.hcl line 2: the provider block opened on line 1 is not closed',
    );
  }, 60_000);
});

describe('simulation/bin/terraform plans what is checked out', () => {
  function checkout(name: string, scenario: string, mainTf?: string) {
    const dir = join(root, 'checkouts', name, 'network');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'fake-terraform.yaml'), scenario);
    if (mainTf) writeFileSync(join(dir, 'main.tf'), mainTf);
    const r = tf(dir, {}, ...PLAN);
    expect(r.code).toBe(2);
    return tf(dir, {}, 'show', '-json', 'tf.plan').stdout;
  }

  it('gives two checkouts of the same component different plans when their content differs', () => {
    const scenario = 'environment: prod\nsteps:\n  - state: changes\n';
    const main = checkout('main', scenario);
    expect(checkout('main-again', scenario)).toBe(main);
    expect(checkout('pr-1', `${scenario}extraResources: 3\n`)).not.toBe(main);
    expect(checkout('pr-2', scenario, 'resource "aws_s3_bucket" "logs" {}\n')).not.toBe(main);
  }, 120_000);
});
