import type { ToolOutput } from './excerpt.js';

const ADDR = '((?:[a-z0-9.-]{1,100}/)?[a-z0-9_-]{1,64}/[a-z0-9_-]{1,64})';
const VERSION = '([0-9][0-9A-Za-z.+-]{0,40})';
/**
 * `plan` without `init` in a directory whose providers are not installed (Terraform 1.x and OpenTofu):
 * "Required plugins are not installed … there is no package for <addr> <version> cached in
 * .terraform/providers", or with no lock file "provider <addr>: required by this configuration but no
 * version is selected".
 */
const NOT_INSTALLED = new RegExp(`there is no package for ${ADDR} ${VERSION} cached in`, 'g');
const NOT_SELECTED = new RegExp(
  `provider ${ADDR}: required by this configuration but no version is selected`,
  'g',
);

const full = (a: string) => (a.split('/').length === 2 ? `registry.terraform.io/${a}` : a);

/**
 * The providers a `plan` (run without `init`) says are not installed, as needs
 * (`registry.terraform.io/hashicorp/null 3.2.2`, or the address alone when no version is selected).
 * Empty when the failure is something else.
 */
export function planProviderNeeds(out: ToolOutput): string[] {
  const text = `${(out.stdout ?? '').slice(0, 256 * 1024)}\n${out.stderr.slice(0, 256 * 1024)}`;
  const needs = new Set<string>();
  for (const m of text.matchAll(NOT_INSTALLED)) needs.add(`${full(`${m[1]}`)} ${m[2]}`);
  for (const m of text.matchAll(NOT_SELECTED)) needs.add(full(`${m[1]}`));
  return [...needs].slice(0, 50);
}
