import { z } from 'zod';
import { PROFILE_NAMES } from './core/link/profiles.js';
import { WHEN_DOWN } from './core/link/settings.js';
import { type LinkConfig, resolveSettings } from './link.js';

const PORT = z.coerce.number().int().min(0).max(65535);

/** "9000", ":9000" or "host:9000". */
const Address = (what: string, defaultHost: string) =>
  z.string().transform((s, ctx) => {
    const m = /^(?:(.*):)?(\d+)$/.exec(s.trim());
    const port = m ? Number(m[2]) : Number.NaN;
    if (!m || port > 65535) {
      ctx.addIssue({ code: 'custom', message: `${what} must be [host:]port, got '${s}'` });
      return z.NEVER;
    }
    return { host: m[1] || defaultHost, port };
  });

/** "1000000", "1mbit", "512kbit", "2.5Mbit/s": bits per second. */
const Bandwidth = z.string().transform((s, ctx) => {
  const m = /^(\d+(?:\.\d+)?)\s*([kmg]?)(?:bit|bps|b)?(?:\/s)?$/i.exec(s.trim());
  if (!m) {
    ctx.addIssue({
      code: 'custom',
      message: `bandwidth must look like 1000000, 512kbit or 2mbit, got '${s}'`,
    });
    return z.NEVER;
  }
  const mult = { '': 1, k: 1e3, m: 1e6, g: 1e9 }[m[2]!.toLowerCase() as '' | 'k' | 'm' | 'g'];
  return Number(m[1]) * mult;
});

const MS = z.coerce.number().nonnegative();

/** The `link` verb's options as commander hands them over. */
export const LinkOptionsSchema = z.object({
  name: z.string().min(1).optional(),
  listen: Address('--listen', '127.0.0.1').default({ host: '127.0.0.1', port: 0 }),
  target: Address('--target', '127.0.0.1'),
  profile: z.enum(PROFILE_NAMES as [string, ...string[]]).optional(),
  timeScale: z.coerce.number().positive().default(1),
  control: z.union([z.literal(false), PORT]).default(0),
  whenDown: z.enum(WHEN_DOWN).optional(),
  delayMs: MS.optional(),
  jitterMs: MS.optional(),
  bandwidth: Bandwidth.optional(),
  settings: z.string().optional(),
  seed: z.coerce.number().int().default(1),
});

/**
 * Turns CLI options into a LinkConfig: profile first, then `--settings` JSON, then the single-value
 * flags (which apply to both directions). Every problem is listed, nothing is half-applied.
 */
export function linkConfigFromOptions(
  raw: unknown,
): { ok: true; config: LinkConfig } | { ok: false; problems: string[] } {
  const parsed = LinkOptionsSchema.safeParse(raw);
  if (!parsed.success) {
    return {
      ok: false,
      problems: parsed.error.issues.map((i) => `--${kebab(String(i.path[0] ?? ''))}: ${i.message}`),
    };
  }
  const o = parsed.data;
  let extra: Record<string, unknown> = {};
  if (o.settings) {
    try {
      extra = JSON.parse(o.settings);
    } catch {
      return { ok: false, problems: ['--settings: not JSON; pass a JSON object of link settings'] };
    }
  }
  const dir: Record<string, number> = {};
  if (o.delayMs !== undefined) dir.delayMs = o.delayMs;
  if (o.jitterMs !== undefined) dir.jitterMs = o.jitterMs;
  if (o.bandwidth !== undefined) dir.bandwidthBps = o.bandwidth;
  const both = (k: 'uplink' | 'downlink') => ({ ...(extra[k] as object | undefined), ...dir });
  const settings = {
    ...extra,
    ...(Object.keys(dir).length ? { uplink: both('uplink'), downlink: both('downlink') } : {}),
    ...(o.whenDown ? { whenDown: o.whenDown } : {}),
  };
  const config: LinkConfig = {
    name: o.name,
    listen: o.listen,
    target: o.target,
    profile: o.profile,
    timeScale: o.timeScale,
    settings,
    controlPort: o.control,
    seed: o.seed,
  };
  const r = resolveSettings(config);
  if (!r.ok) return { ok: false, problems: r.problems.map((p) => `settings: ${p}`) };
  return { ok: true, config };
}

function kebab(s: string): string {
  return s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}
