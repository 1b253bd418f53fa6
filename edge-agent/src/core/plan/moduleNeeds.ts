import type { ProcessResult } from '../../ports/ProcessRunner.js';
import type { ModuleCall } from './moduleCalls.js';

/**
 * Modules an offline `init` could not fetch, in Terraform's own words (1.x and OpenTofu alike):
 * "Could not download module "net" (main.tf:1) source code from "<source>"" for git, http and other
 * go-getter sources, and "Failed to retrieve available versions for module "reg" (main.tf:4) from
 * <host>" for registry modules, whose source Terraform does not repeat.
 */
const DOWNLOAD =
  /Could not download module "[A-Za-z0-9_-]{1,64}" \([^)]{0,300}\) source code from "([^"\s]{1,1000})"/g;
const REGISTRY =
  /Failed to retrieve available versions for module "([A-Za-z0-9_-]{1,64})" \([^)]{0,300}\) from ([A-Za-z0-9.-]{1,253}(?::[0-9]{1,5})?)/g;

/** Query parameters of a module source that say what to fetch; any other (`sshkey`, tokens) is dropped. */
const KEPT_QUERY = new Set(['ref', 'depth', 'archive']);

/**
 * A module source as a need that may leave the site: no user or password in a URL and no query
 * parameter other than `ref`/`depth`/`archive` (go-getter's `sshkey` carries a private key).
 */
export function safeModuleSource(source: string): string {
  let s = source.replace(/^([a-z0-9+]{1,20}::)?([a-z][a-z0-9+.-]{0,20}:\/\/)[^/@\s]{0,500}@/i, '$1$2');
  const q = s.indexOf('?');
  if (q >= 0) {
    const kept = s
      .slice(q + 1)
      .split('&')
      .filter((p) => KEPT_QUERY.has(p.split('=')[0] ?? ''));
    s = `${s.slice(0, q)}${kept.length > 0 ? `?${kept.join('&')}` : ''}`;
  }
  return s.slice(0, 290);
}

/**
 * Needs (`module <source>`; a registry module as `module <source> <version>` from its call in the root
 * module, e.g. `module terraform-aws-modules/vpc/aws 5.0.0`, or `module "<call>" from <registry host>`
 * when the call is not found) for the modules an `init` could not fetch. Terraform wraps its messages at
 * ~78 columns (inside `│ ` boxes without -no-color): lines are joined before matching.
 */
export function initModuleNeeds(
  r: Pick<ProcessResult, 'stdout' | 'stderr'>,
  calls: readonly ModuleCall[] = [],
): string[] {
  const raw = `${r.stdout.slice(0, 256 * 1024)}\n${r.stderr.slice(0, 256 * 1024)}`;
  const text = raw
    .split('\n')
    .map((l) => l.replace(/^[\u2502\u2577\u2575]\s?/, '').trim()) // │ ╷ ╵ (escaped: one-byte bundle source)
    .join(' ');
  const needs = new Set<string>();
  for (const m of text.matchAll(DOWNLOAD)) needs.add(`module ${safeModuleSource(`${m[1]}`)}`);
  for (const m of text.matchAll(REGISTRY)) {
    const call = calls.find((c) => c.name === m[1]);
    needs.add(
      call
        ? `module ${safeModuleSource(call.source)}${call.version ? ` ${call.version}` : ''}`
        : `module "${m[1]}" from ${m[2]}`,
    );
  }
  return [...needs].slice(0, 50);
}
