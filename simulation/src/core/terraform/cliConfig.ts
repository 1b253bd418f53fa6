import { type HclBlock, type HclValue, parseHcl } from './hcl.js';

/** Where `terraform init` may install providers from, in the CLI configuration's order. */
export type InstallMethod =
  | { kind: 'filesystem_mirror'; path: string; include: string[]; exclude: string[] }
  | { kind: 'network_mirror'; url: string; include: string[]; exclude: string[] }
  | { kind: 'direct'; include: string[]; exclude: string[] };

export const DEFAULT_REGISTRY = 'registry.terraform.io';

/**
 * The `provider_installation` block of a CLI configuration file (`TF_CLI_CONFIG_FILE`), or null when
 * the file has none (Terraform then installs every provider directly from its registry).
 * https://developer.hashicorp.com/terraform/cli/config/config-file#provider-installation
 */
export function parseCliConfig(
  text: string,
): { ok: true; methods: InstallMethod[] | null } | { ok: false; problem: string } {
  const r = parseHcl(text);
  if (!r.ok) return r;
  const blocks = r.body.blocks.filter((b) => b.type === 'provider_installation');
  if (blocks.length === 0) return { ok: true, methods: null };
  if (blocks.length > 1)
    return { ok: false, problem: `line ${blocks[1]!.line}: only one provider_installation block is allowed` };
  const methods: InstallMethod[] = [];
  for (const b of blocks[0]!.body.blocks) {
    const m = method(b);
    if (typeof m === 'string') return { ok: false, problem: `line ${b.line}: ${m}` };
    methods.push(m);
  }
  return { ok: true, methods };
}

function method(b: HclBlock): InstallMethod | string {
  const list = (name: string): string[] | string => {
    const v: HclValue | undefined = b.body.attrs[name];
    if (v === undefined) return [];
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string'))
      return `${b.type}: ${name} must be a list of strings`;
    for (const p of v as string[]) {
      const problem = patternProblem(p);
      if (problem) return `${b.type}: ${problem}`;
    }
    return v as string[];
  };
  const include = list('include');
  const exclude = list('exclude');
  if (typeof include === 'string') return include;
  if (typeof exclude === 'string') return exclude;
  switch (b.type) {
    case 'filesystem_mirror': {
      const path = b.body.attrs.path;
      if (typeof path !== 'string' || !path) return 'filesystem_mirror needs path = "<directory>"';
      return { kind: 'filesystem_mirror', path, include, exclude };
    }
    case 'network_mirror': {
      const url = b.body.attrs.url;
      if (typeof url !== 'string' || !/^https:\/\//.test(url))
        return 'network_mirror needs url = "https://…"';
      return { kind: 'network_mirror', url, include, exclude };
    }
    case 'direct':
      return { kind: 'direct', include, exclude };
    default:
      return `unknown installation method "${b.type}" (expected filesystem_mirror, network_mirror or direct)`;
  }
}

/** Why a provider matching pattern is invalid, as Terraform's `ParseMultiSourceMatchingPatterns` judges it. */
function patternProblem(p: string): string | null {
  const parts = p.split('/');
  if (parts.length < 2 || parts.length > 3)
    return `invalid provider matching pattern "${p}": must have either two or three slash-separated segments`;
  const [host, ns, type] = parts.length === 3 ? parts : ['', ...parts];
  if (host === '*' && (ns !== '*' || type !== '*'))
    return `invalid provider matching pattern "${p}": hostname can be a wildcard only if both namespace and provider type are also wildcards`;
  if (ns === '*' && type !== '*')
    return `invalid provider matching pattern "${p}": namespace can be a wildcard only if the provider type is also a wildcard`;
  return null;
}

/**
 * Whether `address` matches a pattern: two segments (`hashicorp/*`) mean the default registry host,
 * three (`*\/*\/*`, `example.com/acme/*`) name the host; `*` matches any one segment.
 */
export function matchesPattern(pattern: string, address: string): boolean {
  const pp = pattern.toLowerCase().split('/');
  const [ph, pn, pt] = pp.length === 3 ? pp : [DEFAULT_REGISTRY, ...pp];
  const [h, n, t] = address.toLowerCase().split('/');
  return (ph === '*' || ph === h) && (pn === '*' || pn === n) && (pt === '*' || pt === t);
}

/** Whether a method may install `address`: not excluded, and included when it lists any includes. */
export function canHandle(m: InstallMethod, address: string): boolean {
  if (m.exclude.some((p) => matchesPattern(p, address))) return false;
  return m.include.length === 0 || m.include.some((p) => matchesPattern(p, address));
}
