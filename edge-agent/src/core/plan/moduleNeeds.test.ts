import { describe, expect, it } from 'vitest';
import { initModuleNeeds } from './moduleNeeds.js';

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
