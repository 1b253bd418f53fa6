import { describe, expect, it } from 'vitest';
import { moduleCalls } from './moduleCalls.js';
import { initModuleNeeds } from './moduleNeeds.js';
import { planProviderNeeds } from './pluginNeeds.js';

const out = (stdout: string, stderr = '') => ({
  exitCode: 1,
  signal: null,
  timedOut: false,
  stdout,
  stdoutOverflow: false,
  stderr,
});

// Terraform 1.11's words for modules an offline `init` could not fetch (checked on the real binary).
const GIT = `Error: Failed to download module

  on main.tf line 1:
   1: module "net" {

Could not download module "net" (main.tf:1) source code from
"git::https://127.0.0.1:1/infra/net.git?ref=v1.2.0": error
downloading 'https://127.0.0.1:1/infra/net.git?ref=v1.2.0':
/usr/bin/git exited with 128: Cloning into '/tmp/tm/d/modules/net'...`;

const REGISTRY = `Error: Error accessing remote module registry

  on main.tf line 4:
   4: module "reg" {

Failed to retrieve available versions for module "reg" (main.tf:4) from
registry.terraform.io: failed to request discovery document: Get`;

describe('modules an offline init could not fetch', () => {
  it('names the module source, from wrapped plain text and from error boxes', () => {
    expect(initModuleNeeds(out('', GIT))).toEqual([
      'module git::https://127.0.0.1:1/infra/net.git?ref=v1.2.0',
    ]);
    const boxed = GIT.split('\n')
      .map((l) => `\u2502 ${l}`)
      .join('\n');
    expect(initModuleNeeds(out(boxed))).toEqual(['module git::https://127.0.0.1:1/infra/net.git?ref=v1.2.0']);
  });

  it('names a registry module by its call and host when Terraform gives no source', () => {
    expect(initModuleNeeds(out('', REGISTRY))).toEqual(['module "reg" from registry.terraform.io']);
  });

  it('drops credentials from a source URL, since needs leave the site', () => {
    const withUser = GIT.replaceAll('https://127.0.0.1:1', 'https://deploy:hunter2@127.0.0.1:1');
    const needs = initModuleNeeds(out('', withUser));
    expect(needs).toEqual(['module git::https://127.0.0.1:1/infra/net.git?ref=v1.2.0']);
    expect(JSON.stringify(needs)).not.toContain('hunter2');
  });

  it('finds nothing in other failures', () => {
    expect(initModuleNeeds(out('', 'Error: Unsupported argument'))).toEqual([]);
  });
});

describe('issue 43: needs a person can publish', () => {
  const REGISTRY_OFFLINE = `Error: Error accessing remote module registry

  on main.tf line 1:
   1: module "vpc" {

Failed to retrieve available versions for module "vpc" (main.tf:1) from
registry.terraform.io: failed to request discovery document: Get
"https://registry.terraform.io/.well-known/terraform.json": dial tcp: lookup
registry.terraform.io on 10.255.255.53:53: no such host.
`;

  it('names a registry module by its source and version from the root module call', () => {
    const calls = moduleCalls(
      '# net\nmodule "vpc" {\n  source  = "terraform-aws-modules/vpc/aws"\n  version = "5.0.0"\n  name = "x"\n}\nmodule "other" {\n  source = "./o"\n}\n',
    );
    expect(calls).toEqual([
      { name: 'vpc', source: 'terraform-aws-modules/vpc/aws', version: '5.0.0' },
      { name: 'other', source: './o' },
    ]);
    expect(initModuleNeeds(out('', REGISTRY_OFFLINE), calls)).toEqual([
      'module terraform-aws-modules/vpc/aws 5.0.0',
    ]);
    // Without the call (a nested module), the registry host as before.
    expect(initModuleNeeds(out('', REGISTRY_OFFLINE))).toEqual(['module "vpc" from registry.terraform.io']);
  });

  it('reads the providers a plan without init says are not installed', () => {
    const json =
      '{"@level":"error","diagnostic":{"severity":"error","summary":"Required plugins are not installed","detail":"The installed provider plugins are not consistent with the packages selected in the dependency lock file:\\n  - registry.terraform.io/hashicorp/null: there is no package for registry.terraform.io/hashicorp/null 3.2.2 cached in .terraform/providers\\n"},"type":"diagnostic"}\n';
    expect(planProviderNeeds(out(json))).toEqual(['registry.terraform.io/hashicorp/null 3.2.2']);
    const noLock =
      'Error: Inconsistent dependency lock file\n\n  - provider registry.terraform.io/hashicorp/null: required by this configuration but no version is selected\n';
    expect(planProviderNeeds(out('', noLock))).toEqual(['registry.terraform.io/hashicorp/null']);
    expect(planProviderNeeds(out('', 'Error: Unsupported argument'))).toEqual([]);
  });
});
