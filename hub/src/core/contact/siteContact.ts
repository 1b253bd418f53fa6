import {
  judgeContact,
  learnContactPlan,
  parseWindows,
  type SiteContact,
  type WindowSpec,
} from '@driftline/protocol';

/** The hub's `contactPlans:` settings (hub.yaml), in milliseconds where they are times. */
export interface ContactPlanSettings {
  graceMs: number;
  unreachableAfter: number;
  learnSilenceMs: number;
  minConfidence: number;
  /** Windows declared in the hub's config, per site. */
  sites: Record<string, string[]>;
}

const iso = (t: number | null | undefined): string | null =>
  t === null || t === undefined ? null : new Date(t).toISOString();

/**
 * A site's contact plan and where it stands at `now`: the windows declared for it (by its agents and in
 * the hub's config), else the ones learned from its contact history; judged when declared, or learned
 * with at least `minConfidence`.
 */
export function siteContact(input: {
  declared: readonly string[];
  /** The site's contact history, read only when no window is declared (to learn one from it). */
  history: () => readonly number[];
  lastContactAt: number | null;
  now: number;
  settings: ContactPlanSettings;
}): SiteContact {
  const { settings: s } = input;
  let specs: WindowSpec[] = parseWindows(input.declared);
  let source: SiteContact['source'] = 'declared';
  let windows = [...input.declared];
  let confidence: number | null = null;
  if (specs.length === 0) {
    const learned = learnContactPlan(input.history(), { silenceMs: s.learnSilenceMs });
    if (learned) {
      source = 'learned';
      windows = [learned.window];
      confidence = learned.confidence;
      specs = parseWindows(windows);
    } else {
      source = 'none';
      windows = [...input.declared];
    }
  }
  const judged = specs.length > 0 && (source === 'declared' || (confidence ?? 0) >= s.minConfidence);
  const j = judgeContact(specs, input.lastContactAt, input.now, {
    graceMs: s.graceMs,
    unreachableAfter: s.unreachableAfter,
  });
  return {
    source,
    windows,
    confidence,
    judged,
    state: judged ? j.state : 'unplanned',
    nextWindowAt: iso(j.next?.start),
    nextWindowEndsAt: iso(j.next?.end),
    lastWindowAt: iso(j.last?.start),
    lastWindowEndsAt: iso(j.last?.end),
    missedWindows: judged ? j.missed : 0,
    graceS: s.graceMs / 1000,
    unreachableAfter: s.unreachableAfter,
  };
}
