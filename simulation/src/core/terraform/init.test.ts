import { describe, expect, it } from 'vitest';
import type { InstallMethod } from './cliConfig.js';
import {
  initOutcome,
  type MirrorPackage,
  type MirrorPort,
  pluginsProblem,
  requiredProviders,
} from './init.js';

const AWS = 'registry.terraform.io/hashicorp/aws';
const ACME = 'example.com/acme/thing';
const ZH = 'a'.repeat(64);

/** An in-memory mirror: `dir` → `address version platform` → package. */
function mirror(m: Record<string, Record<string, MirrorPackage>>): MirrorPort {
  return {
    versions: (dir, address) =>
      Object.keys(m[dir] ?? {})
        .filter((k) => k.startsWith(`${address} `))
        .map((k) => k.split(' ')[1]!),
    find: (dir, address, version, platform) => m[dir]?.[`${address} ${version} ${platform}`] ?? null,
  };
}

const fsm = (path: string, more: Partial<InstallMethod> = {}): InstallMethod =>
  ({ kind: 'filesystem_mirror', path, include: [], exclude: [], ...more }) as InstallMethod;
const offline: InstallMethod[] = [fsm('/mirror'), { kind: 'direct', include: [], exclude: ['*/*/*'] }];
const locked = (version = '5.31.0', zh: string[] = [ZH]) =>
  requiredProviders([{ address: AWS, version, hashes: zh.map((h) => `zh:${h}`) }], []);
const base = { platform: 'linux_amd64', network: false };

describe('fake terraform init', () => {
  it('installs a locked provider from the mirror when its zip matches the lock file', () => {
    const o = initOutcome({
      ...base,
      required: locked(),
      methods: offline,
      mirror: mirror({ '/mirror': { [`${AWS} 5.31.0 linux_amd64`]: { layout: 'packed', sha256: ZH } } }),
    });
    expect(o.exitCode).toBe(0);
    expect(o.stdout).toContain('- Reusing previous version of hashicorp/aws from the dependency lock file');
    expect(o.stdout).toContain('- Installed hashicorp/aws v5.31.0 (verified checksum)');
    expect(o.stdout).toContain('Terraform has been successfully initialized!');
    expect(o.installed).toEqual([{ address: AWS, version: '5.31.0', platform: 'linux_amd64' }]);
  });

  it('fails like Terraform when no search location has the provider, listing the locations', () => {
    const o = initOutcome({ ...base, required: locked(), methods: offline, mirror: mirror({}) });
    expect(o.exitCode).toBe(1);
    expect(o.installed).toEqual([]);
    expect(o.stderr).toBe(
      [
        '╷',
        '│ Error: Failed to query available provider packages',
        '│ ',
        '│ Could not retrieve the list of available versions for provider hashicorp/aws: provider registry.terraform.io/hashicorp/aws was not found in any of the search locations',
        '│',
        '│   - /mirror',
        '╵',
        '',
      ].join('\n'),
    );
  });

  it('fails like an offline registry lookup when direct installation is allowed without a network', () => {
    const o = initOutcome({ ...base, required: locked(), methods: null, mirror: mirror({}) });
    expect(o.exitCode).toBe(1);
    expect(o.stderr).toContain(
      'Could not retrieve the list of available versions for provider hashicorp/aws: could not connect to registry.terraform.io: failed to request discovery document: Get "https://registry.terraform.io/.well-known/terraform.json": dial tcp: lookup registry.terraform.io: no such host',
    );
    // `*/*` excludes only the default registry's providers: another host's still goes direct.
    const other = requiredProviders([{ address: ACME, version: '1.0.0', hashes: [] }], []);
    const partly = [{ kind: 'direct' as const, include: [], exclude: ['*/*'] }];
    expect(initOutcome({ ...base, required: other, methods: partly, mirror: mirror({}) }).stderr).toContain(
      'could not connect to example.com',
    );
    const online = initOutcome({
      ...base,
      network: true,
      required: locked(),
      methods: null,
      mirror: mirror({}),
    });
    expect(online.exitCode).toBe(0);
    expect(online.stdout).toContain('(signed by HashiCorp)');
  });

  it("fails Terraform's checksum check for a packed zip not among the lock file's zh: hashes", () => {
    const o = initOutcome({
      ...base,
      required: locked(),
      methods: offline,
      mirror: mirror({
        '/mirror': { [`${AWS} 5.31.0 linux_amd64`]: { layout: 'packed', sha256: 'b'.repeat(64) } },
      }),
    });
    expect(o.exitCode).toBe(1);
    expect(o.stderr).toContain('│ Error: Failed to install provider');
    expect(o.stderr).toContain(
      "Error while installing hashicorp/aws v5.31.0: the local package for registry.terraform.io/hashicorp/aws 5.31.0 doesn't match any of the checksums previously recorded in the dependency lock file",
    );
  });

  it('says which version is missing, or that the platform is, and reports every provider at once', () => {
    const m = mirror({
      '/mirror': {
        [`${AWS} 5.30.0 linux_amd64`]: { layout: 'unpacked' },
        [`${ACME} 1.0.0 darwin_arm64`]: { layout: 'unpacked' },
      },
    });
    const req = requiredProviders(
      [{ address: AWS, version: '5.31.0', hashes: [] }],
      ['example.com/acme/thing 1.0.0'],
    );
    const o = initOutcome({ ...base, required: req, methods: [fsm('/mirror')], mirror: m });
    expect(o.exitCode).toBe(1);
    expect(o.stderr).toContain(
      'hashicorp/aws: the previously-selected version 5.31.0 is no longer available',
    );
    expect(o.stdout).toContain('- Finding example.com/acme/thing versions matching "1.0.0"...');
    expect(o.stderr).toContain(
      'Provider example.com/acme/thing v1.0.0 does not have a package available for your current platform, linux_amd64.',
    );
  });

  it('takes a build from the first method that may serve it, honouring include patterns', () => {
    const m = mirror({
      '/only-acme': { [`${AWS} 5.31.0 linux_amd64`]: { layout: 'packed', sha256: 'c'.repeat(64) } },
      '/all': { [`${AWS} 5.31.0 linux_amd64`]: { layout: 'packed', sha256: ZH } },
    });
    const methods = [fsm('/only-acme', { include: ['example.com/acme/*'] }), fsm('/all')];
    expect(initOutcome({ ...base, required: locked(), methods, mirror: m }).exitCode).toBe(0);
    const reversed = [fsm('/all'), fsm('/only-acme')];
    expect(initOutcome({ ...base, required: locked(), methods: reversed, mirror: m }).exitCode).toBe(0);
    const wrongFirst = [fsm('/only-acme'), fsm('/all')];
    expect(initOutcome({ ...base, required: locked(), methods: wrongFirst, mirror: m }).exitCode).toBe(1);
  });

  it('succeeds with nothing to install (a directory without a lock file or scenario providers)', () => {
    const o = initOutcome({ ...base, required: [], methods: null, mirror: mirror({}) });
    expect(o).toMatchObject({ exitCode: 0, stderr: '' });
  });
});

describe('plan before init', () => {
  const installed = [{ address: AWS, version: '5.31.0', platform: 'linux_amd64' }];

  it('says "Required plugins are not installed" for a locked provider init did not install', () => {
    const p = pluginsProblem(locked('5.32.0'), installed, 'linux_amd64');
    expect(p).toContain('│ Error: Required plugins are not installed');
    expect(p).toContain(
      '│   - registry.terraform.io/hashicorp/aws: there is no package for registry.terraform.io/hashicorp/aws 5.32.0 cached in .terraform/providers',
    );
    expect(pluginsProblem(locked(), installed, 'linux_amd64')).toBeNull();
    expect(pluginsProblem(locked(), installed, 'darwin_arm64')).toContain(
      'Required plugins are not installed',
    );
  });

  it('says "Inconsistent dependency lock file" for a required provider nothing selected', () => {
    const p = pluginsProblem(requiredProviders([], ['hashicorp/tls 4.0.5']), installed, 'linux_amd64');
    expect(p).toContain('│ Error: Inconsistent dependency lock file');
    expect(p).toContain(
      'provider registry.terraform.io/hashicorp/tls: required by this configuration but no version is selected',
    );
    expect(pluginsProblem([], [], 'linux_amd64')).toBeNull();
  });
});
