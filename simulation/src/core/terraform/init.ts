import { type LockedProvider, zipHashes } from '@driftline/protocol';
import { canHandle, DEFAULT_REGISTRY, type InstallMethod } from './cliConfig.js';
import { box } from './messages.js';
import type { Outcome } from './run.js';

/** A provider `init` must install: from the lock file (locked) or only the scenario's `providers`. */
export interface RequiredProvider {
  address: string;
  version: string;
  /** The lock file's `zh:` hashes (hex) for it; empty when it has none or is not locked. */
  zh: string[];
  locked: boolean;
}

/**
 * What `init` must install: every provider of the lock file at its locked version, and the scenario's
 * `providers` (`hashicorp/aws 5.31.0`, standing for the configuration's `required_providers`) that the
 * lock file does not list.
 */
export function requiredProviders(lock: LockedProvider[], scenario: string[]): RequiredProvider[] {
  const out: RequiredProvider[] = lock.map((p) => ({
    address: p.address,
    version: p.version,
    zh: zipHashes(p),
    locked: true,
  }));
  for (const s of scenario) {
    const [addr = '', version = ''] = s.split(' ');
    const address = addr.split('/').length === 2 ? `${DEFAULT_REGISTRY}/${addr}` : addr;
    if (!out.some((p) => p.address === address)) out.push({ address, version, zh: [], locked: false });
  }
  return out;
}

/** A package found in a filesystem mirror. */
export type MirrorPackage = { layout: 'packed'; sha256: string } | { layout: 'unpacked' };

/** What `init` may look at in a filesystem mirror (an adapter reads the disk). */
export interface MirrorPort {
  /** Versions of `address` the mirror at `dir` holds, for any platform. */
  versions(dir: string, address: string): string[];
  /** The mirror's package of one build, or null. */
  find(dir: string, address: string, version: string, platform: string): MirrorPackage | null;
}

export interface InitInput {
  required: RequiredProvider[];
  /** The CLI configuration's `provider_installation` methods; null: none configured (direct only). */
  methods: InstallMethod[] | null;
  platform: string;
  /** Whether a registry can be reached (`FAKE_TERRAFORM_NETWORK=1`). */
  network: boolean;
  mirror: MirrorPort;
}

/** A provider build `init` installed. */
export interface Installed {
  address: string;
  version: string;
  platform: string;
}

/** `hashicorp/aws` for the default registry, the full address otherwise (Terraform's `ForDisplay`). */
export function forDisplay(address: string): string {
  return address.startsWith(`${DEFAULT_REGISTRY}/`) ? address.slice(DEFAULT_REGISTRY.length + 1) : address;
}

const hostOf = (m: InstallMethod, address: string) =>
  m.kind === 'network_mirror' ? new URL(m.url).hostname : address.split('/')[0]!;

/** What the registry says when the network is down: DNS fails before discovery. */
function unreachable(m: InstallMethod, address: string): string {
  const host = hostOf(m, address);
  if (m.kind === 'network_mirror')
    return `failed to query provider mirror ${m.url} for ${address}: Get "${m.url}${address}/index.json": dial tcp: lookup ${host}: no such host`;
  return `could not connect to ${host}: failed to request discovery document: Get "https://${host}/.well-known/terraform.json": dial tcp: lookup ${host}: no such host`;
}

const queryFailed = (p: RequiredProvider, detail: string, hint = true) =>
  box('Failed to query available provider packages', [
    ...`Could not retrieve the list of available versions for provider ${forDisplay(p.address)}: ${detail}`.split(
      '\n',
    ),
    ...(hint
      ? [
          '',
          `To see which modules are currently depending on ${forDisplay(p.address)} and what versions are specified, run the following command:`,
          '    terraform providers',
        ]
      : []),
  ]);

/**
 * `terraform init`'s provider installation, offline as at a site: each required provider is looked
 * up in the configured installation methods in order (a method's include/exclude patterns decide
 * which it may serve), then installed from the first that has its build for `platform`. A packed zip
 * must match the lock file's `zh:` hashes. Failures are Terraform's own diagnostics, every provider's
 * together, exit 1; what did install is returned either way (it stays cached, as in `.terraform/`).
 */
export function initOutcome(i: InitInput): Outcome & { installed: Installed[] } {
  const methods = i.methods ?? [{ kind: 'direct', include: [], exclude: [] }];
  const out: string[] = ['', 'Initializing the backend...', '', 'Initializing provider plugins...'];
  const errors: string[] = [];
  const installed: Installed[] = [];
  for (const p of i.required) {
    const name = forDisplay(p.address);
    out.push(
      p.locked
        ? `- Reusing previous version of ${name} from the dependency lock file`
        : `- Finding ${name} versions matching "${p.version}"...`,
    );
    const eligible = methods.filter((m) => canHandle(m, p.address));
    const versions = new Set<string>();
    let failure: string | null = null;
    for (const m of eligible) {
      if (m.kind === 'filesystem_mirror')
        for (const v of i.mirror.versions(m.path, p.address)) versions.add(v);
      else if (!i.network) {
        failure = queryFailed(p, unreachable(m, p.address));
        break;
      } else versions.add(p.version);
    }
    if (failure) {
      errors.push(failure);
      continue;
    }
    if (versions.size === 0) {
      const sources = eligible.map(
        (m) =>
          `  - ${m.kind === 'filesystem_mirror' ? m.path : m.kind === 'network_mirror' ? m.url : hostOf(m, p.address)}`,
      );
      errors.push(
        queryFailed(
          p,
          `provider ${p.address} was not found in any of the search locations\n\n${sources.join('\n')}`.trimEnd(),
          false,
        ),
      );
      continue;
    }
    if (!versions.has(p.version)) {
      errors.push(
        queryFailed(
          p,
          p.locked
            ? `the previously-selected version ${p.version} is no longer available`
            : `no available releases match the given constraints ${p.version}`,
        ),
      );
      continue;
    }
    out.push(`- Installing ${name} v${p.version}...`);
    let how: string | null = null;
    for (const m of eligible) {
      if (m.kind !== 'filesystem_mirror') {
        how = p.address.split('/')[1] === 'hashicorp' ? 'signed by HashiCorp' : 'unauthenticated';
        break;
      }
      const pkg = i.mirror.find(m.path, p.address, p.version, i.platform);
      if (!pkg) continue;
      if (pkg.layout === 'packed' && p.zh.length > 0 && !p.zh.includes(pkg.sha256)) {
        errors.push(
          box('Failed to install provider', [
            `Error while installing ${name} v${p.version}: the local package for ${p.address} ${p.version} doesn't match any of the checksums previously recorded in the dependency lock file (this might be because the available checksums are for packages targeting different platforms); for more information: https://www.terraform.io/language/provider-checksum-verification`,
          ]),
        );
        how = 'refused';
        break;
      }
      how = pkg.layout === 'packed' && p.zh.length > 0 ? 'verified checksum' : 'unauthenticated';
      break;
    }
    if (how === 'refused') continue;
    if (!how) {
      errors.push(
        box('Incompatible provider version', [
          `Provider ${p.address} v${p.version} does not have a package available for your current platform, ${i.platform}.`,
          '',
          'Provider releases are separate from Terraform CLI releases, so not all providers are available for all platforms. Other versions of this provider may have different platforms supported.',
        ]),
      );
      continue;
    }
    out.push(`- Installed ${name} v${p.version} (${how})`);
    installed.push({ address: p.address, version: p.version, platform: i.platform });
  }
  if (errors.length)
    return { exitCode: 1, stdout: `${out.join('\n')}\n`, stderr: errors.join(''), installed };
  out.push('', 'Terraform has been successfully initialized!', '');
  return { exitCode: 0, stdout: out.join('\n'), stderr: '', installed };
}

/**
 * What `plan` says when `init` has not installed what the configuration needs: providers the lock file
 * selects but that are not installed ("Required plugins are not installed"), and providers the
 * configuration requires that neither the lock file nor an `init` selected ("Inconsistent dependency
 * lock file"). Null when everything is installed.
 */
export function pluginsProblem(
  required: RequiredProvider[],
  installed: Installed[],
  platform: string,
): string | null {
  const has = (p: RequiredProvider) =>
    installed.some((x) => x.address === p.address && x.version === p.version && x.platform === platform);
  const unselected = required.filter((p) => !p.locked && !has(p));
  if (unselected.length)
    return box('Inconsistent dependency lock file', [
      'The following dependency selections recorded in the lock file are inconsistent with the current configuration:',
      ...unselected.map(
        (p) => `  - provider ${p.address}: required by this configuration but no version is selected`,
      ),
      '',
      'To make the initial dependency selections that will initialize the dependency lock file, run:',
      '  terraform init',
    ]);
  const missing = required.filter((p) => p.locked && !has(p));
  if (!missing.length) return null;
  return box('Required plugins are not installed', [
    'The installed provider plugins are not consistent with the packages selected in the dependency lock file:',
    ...missing.map(
      (p) =>
        `  - ${p.address}: there is no package for ${p.address} ${p.version} cached in .terraform/providers`,
    ),
    '',
    'Terraform uses external plugins to integrate with a variety of different infrastructure services. To download the plugins required for this configuration, run:',
    '  terraform init',
  ]);
}
