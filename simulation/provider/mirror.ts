// Lays out the Driftline test provider as an unpacked filesystem mirror that real terraform installs
// from offline, and the CLI configuration that points terraform at it. Use it by path from any
// workspace's tests: `import { layOutTestProvider } from '<repo>/simulation/provider/mirror.ts'`.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';

/** Where terraform finds the provider: `source = "driftline/testobj"` in required_providers. */
export const TESTOBJ_SOURCE = 'driftline/testobj';
export const TESTOBJ_HOST = 'registry.terraform.io';
export const TESTOBJ_VERSION = '0.1.0';

const here = dirname(fileURLToPath(import.meta.url));

export interface TestProviderLayout {
  /** The filesystem mirror's root (filesystem_mirror.path). */
  mirrorDir: string;
  /** The executable terraform runs. */
  executable: string;
  /** A CLI configuration file: this mirror for everything, no direct installs (offline). */
  cliConfigFile: string;
  /** Environment for terraform: TF_CLI_CONFIG_FILE, TF_DISABLE_PLUGIN_TLS, DRIFTLINE_TESTOBJ_FILE. */
  env: Record<string, string>;
}

/**
 * Writes `<dir>/mirror/registry.terraform.io/driftline/testobj/<version>/<os_arch>/terraform-provider-testobj_v<version>`
 * (a shell launcher of simulation/provider/main.js) and `<dir>/terraformrc`.
 * `objectsFile` is the JSON file the provider keeps its objects in (tests edit it for drift).
 */
export function layOutTestProvider(
  dir: string,
  opts: {
    objectsFile: string;
    version?: string;
    platform?: string;
    /** Run main.js through tsx instead of a CommonJS bundle (slower start: ~0.4 s more per launch). */
    unbundled?: boolean;
  },
): TestProviderLayout {
  const version = opts.version ?? TESTOBJ_VERSION;
  const platform = opts.platform ?? `linux_${process.arch === 'arm64' ? 'arm64' : 'amd64'}`;
  const mirrorDir = join(dir, 'mirror');
  const pkgDir = join(mirrorDir, TESTOBJ_HOST, TESTOBJ_SOURCE, version, platform);
  mkdirSync(pkgDir, { recursive: true });
  const executable = join(pkgDir, `terraform-provider-testobj_v${version}`);
  // Terraform starts the provider several times per command: a bundle starts without tsx's transform.
  const entry = opts.unbundled ? join(here, 'main.js') : bundle(join(dir, 'bundle', 'provider.cjs'));
  writeFileSync(
    executable,
    `#!/bin/sh\nDRIFTLINE_TESTOBJ_PROTO_DIR=${shellQuote(join(here, 'proto'))} exec ${shellQuote(process.execPath)} ${shellQuote(entry)} "$@"\n`,
  );
  chmodSync(executable, 0o755);
  const cliConfigFile = join(dir, 'terraformrc');
  writeFileSync(cliConfigFile, cliConfig(mirrorDir));
  return {
    mirrorDir,
    executable,
    cliConfigFile,
    env: {
      TF_CLI_CONFIG_FILE: cliConfigFile,
      // The provider speaks plain gRPC on 127.0.0.1 (no go-plugin AutoMTLS): docs/decisions/190-terraform-contract.md.
      TF_DISABLE_PLUGIN_TLS: '1',
      DRIFTLINE_TESTOBJ_FILE: opts.objectsFile,
      CHECKPOINT_DISABLE: '1',
    },
  };
}

/** CLI configuration: install every provider from `mirrorDir`, never from a registry. */
export function cliConfig(mirrorDir: string): string {
  return [
    'provider_installation {',
    '  filesystem_mirror {',
    `    path    = ${JSON.stringify(mirrorDir)}`,
    '    include = ["*/*"]',
    '  }',
    '  direct {',
    '    exclude = ["*/*"]',
    '  }',
    '}',
    '',
  ].join('\n');
}

function bundle(outfile: string): string {
  buildSync({
    entryPoints: [join(here, 'main.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'error',
  });
  return outfile;
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
