import type { Waiver } from '@driftline/protocol';

/**
 * Where a waiver applies, in words: `sites ship-7, polar-* · environments prod`; `every site` when it names
 * no site, environment, component or attribute (its pattern alone decides).
 */
export function waiverScope(w: Pick<Waiver, 'sites' | 'environments' | 'components' | 'attributes'>): string {
  const parts: string[] = [];
  if (w.sites.length > 0) parts.push(`sites ${w.sites.join(', ')}`);
  if (w.environments.length > 0) parts.push(`environments ${w.environments.join(', ')}`);
  if (w.components.length > 0) parts.push(`components ${w.components.join(', ')}`);
  if (w.attributes?.length) parts.push(`attributes ${w.attributes.join(', ')}`);
  if (parts.length === 0) return 'every site';
  return w.sites.length > 0 ? parts.join(' · ') : ['every site', ...parts].join(' · ');
}
