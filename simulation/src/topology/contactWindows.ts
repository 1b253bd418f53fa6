import { readFileSync, writeFileSync } from 'node:fs';
import { formatWindowDuration } from '@driftline/protocol';
import { parse, stringify } from 'yaml';
import type { LinkSettings } from '../core/link/settings.js';

/**
 * A scheduled link's windows in the contact-plan format (`every 4m for 40s from …`), anchored at the time
 * the link started: what a site on that link would declare (docs/decisions/260-contact-plans.md).
 * An always-up link has none.
 */
export function linkContactWindows(settings: LinkSettings, linkStartedAt: number): string[] {
  const s = settings.schedule;
  if (!s || s.upMs <= 0 || s.upMs >= s.periodMs) return [];
  // The schedule is up while ((elapsed - offset) mod period) < up: its first window opens at `offset`.
  const first = linkStartedAt + (((s.offsetMs % s.periodMs) + s.periodMs) % s.periodMs);
  return [
    `every ${formatWindowDuration(s.periodMs)} for ${formatWindowDuration(s.upMs)} from ${new Date(first).toISOString()}`,
  ];
}

/** Writes `windows` as the agent's `sync.contactWindows` in its config file (before the agent starts). */
export function declareContactWindows(agentConfigPath: string, windows: readonly string[]): void {
  if (windows.length === 0) return;
  const config = parse(readFileSync(agentConfigPath, 'utf8')) as { sync?: Record<string, unknown> };
  config.sync = { ...(config.sync ?? {}), contactWindows: [...windows] };
  writeFileSync(agentConfigPath, stringify(config));
}
