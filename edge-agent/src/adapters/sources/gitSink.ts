import type { AgentConfig } from '../../config.js';
import type { PublicationSink } from '../../core/publications/ports.js';
import type { SourceMirror } from '../../ports/SourceMirror.js';

/**
 * `git` publications (git bundles): named after the repository they carry, taken only for a repository a component plans
 * from (`components[].source.repo`), verified and fetched into its mirror. `onHeads` hears which refs moved.
 */
export function gitSink(
  config: AgentConfig,
  mirror: SourceMirror,
  onHeads: (repo: string, updated: Record<string, string>) => void,
): PublicationSink {
  const repos = new Set(config.components.flatMap((c) => (c.source ? [c.source.repo] : [])));
  return {
    refuse: (name) =>
      repos.has(name)
        ? null
        : `repository '${name.slice(0, 80)}' is not planned by any component here (components[].source.repo)`,
    apply: async ({ name, path }) => {
      const r = await mirror.apply(name, path);
      if (r.ok) onHeads(name, r.updated);
      return r.ok ? { ok: true } : r;
    },
  };
}
