import { z } from 'zod';

/**
 * How one direction of a link treats bytes. `uplink` is client → target (the site's side opens every
 * connection, S2 in docs/architecture.md#invariants, so this is toward headquarters); `downlink` is target → client.
 */
export const DirectionSettingsSchema = z.object({
  /** One-way delay: bytes are held this long before they are released, in order. */
  delayMs: z.number().nonnegative().default(0),
  /** Extra random delay per chunk, uniform in [0, jitterMs]; order is still kept. */
  jitterMs: z.number().nonnegative().default(0),
  /** Bandwidth cap in bits per second; null means no cap. */
  bandwidthBps: z.number().positive().nullable().default(null),
  /** Stalls per minute per connection (a Poisson process): nothing is released for `stallMs`. */
  stallsPerMin: z.number().nonnegative().default(0),
  stallMs: z.number().nonnegative().default(0),
});
export type DirectionSettings = z.infer<typeof DirectionSettingsSchema>;

/** Up for `upMs` out of every `periodMs`, the first window opening `offsetMs` after the link starts. */
export const ScheduleSchema = z
  .object({
    upMs: z.number().nonnegative(),
    periodMs: z.number().positive(),
    offsetMs: z.number().nonnegative().default(0),
  })
  .refine((s) => s.upMs <= s.periodMs, { message: 'schedule.upMs must not exceed schedule.periodMs' });
export type Schedule = z.infer<typeof ScheduleSchema>;

export const WHEN_DOWN = ['refuse', 'hang'] as const;

/** Everything about a link that the control API can read and change while it runs. */
export const LinkSettingsSchema = z.object({
  uplink: DirectionSettingsSchema.default(DirectionSettingsSchema.parse({})),
  downlink: DirectionSettingsSchema.default(DirectionSettingsSchema.parse({})),
  /** Random connection resets per minute per open connection (a Poisson process). */
  resetsPerMin: z.number().nonnegative().default(0),
  /** Up/down windows; null means always up (unless forced down). */
  schedule: ScheduleSchema.nullable().default(null),
  /** While down: `refuse` new connections (the listener closes), or `hang` them until the link is up. */
  whenDown: z.enum(WHEN_DOWN).default('refuse'),
  /** Bytes one direction of one connection may hold before the proxy stops reading (backpressure). */
  maxHeldBytes: z
    .number()
    .int()
    .positive()
    .default(8 * 1024 * 1024),
  /** Connections held while down in `hang` mode; past this they are reset. */
  maxHungConnections: z.number().int().positive().default(256),
});
export type LinkSettings = z.infer<typeof LinkSettingsSchema>;
export type LinkSettingsInput = z.input<typeof LinkSettingsSchema>;

export type DirectionName = 'uplink' | 'downlink';

/** Deep-merges a partial settings object into the current one, then validates the result. */
export function mergeSettings(
  current: LinkSettings,
  patch: unknown,
): { ok: true; settings: LinkSettings } | { ok: false; problems: string[] } {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) {
    return { ok: false, problems: ['body: expected a JSON object of link settings'] };
  }
  const p = patch as Record<string, unknown>;
  const merged: Record<string, unknown> = { ...current, ...p };
  for (const dir of ['uplink', 'downlink'] as const) {
    if (isObject(p[dir])) merged[dir] = { ...current[dir], ...(p[dir] as object) };
  }
  if (isObject(p.schedule) && current.schedule)
    merged.schedule = { ...current.schedule, ...(p.schedule as object) };
  return parseSettings(merged);
}

/** Validates settings, naming every problem by path. */
export function parseSettings(
  input: unknown,
): { ok: true; settings: LinkSettings } | { ok: false; problems: string[] } {
  const r = LinkSettingsSchema.strict().safeParse(input);
  if (r.success) return { ok: true, settings: r.data };
  return { ok: false, problems: r.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`) };
}

function isObject(v: unknown): boolean {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
