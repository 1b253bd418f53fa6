import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { AgentConfigSchema } from '@driftline/edge-agent';
import { parseSchedule, parseWindow, SiteIdSchema, WINDOW_FORMS } from '@driftline/protocol';
import { z } from 'zod';
import { PROFILE_NAMES, PROFILES } from '../core/link/profiles.js';
import { type DirectionSettings, type LinkSettingsInput, LinkSettingsSchema } from '../core/link/settings.js';
import { linkContactWindows } from '../topology/contactWindows.js';
import { WORLD_START, type WorldSiteSpec, type WorldSpec } from './World.js';
import type { WorldFaults } from './WorldLink.js';

/** Sites a topology file may describe: as many as `--sites` takes. */
export const MAX_TOPOLOGY_SITES = 1000;
const HELP = 'see examples/topology/polar-fleet.json';

/** A strict object whose unknown keys are refused by name, with the keys it knows. */
function strict<T extends z.ZodRawShape>(shape: T) {
  return z.strictObject(shape, {
    error: (iss) =>
      iss.code === 'unrecognized_keys'
        ? `unknown key${iss.keys.length > 1 ? 's' : ''} ${iss.keys.map((k) => `'${k}'`).join(', ')}: remove ${iss.keys.length > 1 ? 'them' : 'it'} or fix the spelling (known here: ${Object.keys(shape).join(', ')})`
        : undefined,
  });
}

const ms = z.number().nonnegative();

/** One direction of a link, every key optional (a layer over the profile and the defaults). */
const DirectionSchema = strict({
  delayMs: ms.optional(),
  jitterMs: ms.optional(),
  bandwidthBps: z.number().positive().nullable().optional(),
  stallsPerMin: ms.optional(),
  stallMs: ms.optional(),
});

/** A contact window in the one window syntax of agent, hub and relay (protocol's `parseWindow`). */
const WindowText = z.string().superRefine((text, ctx) => {
  const r = parseWindow(text);
  if (!r.ok) ctx.addIssue({ code: 'custom', message: `${r.error}; write ${WINDOW_FORMS}` });
});

const LinkSchema = strict({
  /** A named link of the simulator (`lan`, `geo`, `leo-windows`, `polar`, `mars`, `flaky`): the base the other keys change. */
  profile: z
    .string()
    .refine((p) => PROFILE_NAMES.includes(p), {
      message: `not a link profile; known: ${PROFILE_NAMES.join(', ')}`,
    })
    .optional(),
  /** One-way delay both ways (light time), ms: `uplink.delayMs` and `downlink.delayMs` at once. */
  lightTimeMs: ms.optional(),
  uplink: DirectionSchema.optional(),
  downlink: DirectionSchema.optional(),
  resetsPerMin: ms.optional(),
  whenDown: z.enum(['refuse', 'hang']).optional(),
  /** Per exchange: reset before the far end sees it, answer lost after it acted, delivered twice. */
  loss: strict({
    lossRate: z.number().min(0).max(1).optional(),
    answerLossRate: z.number().min(0).max(1).optional(),
    duplicateRate: z.number().min(0).max(1).optional(),
  }).optional(),
  /** The link is up only inside these (and the site declares them); `[]`: always up. */
  contactWindows: z.array(WindowText).max(50).optional(),
});
type LinkLayer = z.infer<typeof LinkSchema>;

/** The agent's own `sync:` schema (edge-agent's config), to check a topology's keys as the agent would. */
const AGENT_SYNC = AgentConfigSchema.shape.sync;

const SyncSchema = z
  .record(z.string(), z.unknown())
  .superRefine((sync, ctx) => {
    if ('contactWindows' in sync) {
      ctx.addIssue({
        code: 'custom',
        path: ['contactWindows'],
        message:
          'put contact windows in link.contactWindows: the world opens the link by them and the agent (or hub) declares them',
      });
      return;
    }
    const r = AGENT_SYNC.safeParse(sync);
    if (!r.success)
      for (const i of r.error.issues)
        ctx.addIssue({
          code: 'custom',
          path: i.path as PropertyKey[],
          message: `${i.message} (the agent's sync: keys, docs/configuration.md)`,
        });
  })
  // every sync key but contactWindows is a number or a boolean
  .transform((sync) => sync as Record<string, number | boolean>);

const AgentSchema = strict({
  /** Components at the site, one environment each (each a cell the hub shows). */
  components: z.number().int().min(1).max(50).optional(),
  /** When each cell plans: five-field cron, as a component's `schedule` in agent.yaml. */
  schedule: z
    .string()
    .superRefine((text, ctx) => {
      const r = parseSchedule(text);
      if (!r.ok)
        ctx.addIssue({ code: 'custom', message: `${r.error}; write five-field cron, e.g. '0 * * * *'` });
    })
    .optional(),
  /** The agent's `sync:` keys (intervalS, backoffCapS, newsHoldS, wire, …); windows go in link.contactWindows. */
  sync: SyncSchema.optional(),
});
type AgentLayer = z.infer<typeof AgentSchema>;

const SiteSchema = strict({
  /** One site by name (a lowercase slug, e.g. `ship-7`). */
  name: SiteIdSchema.optional(),
  /** Or `count` sites named `<prefix>-001`, `<prefix>-002`, …. */
  count: z.number().int().min(1).max(MAX_TOPOLOGY_SITES).optional(),
  prefix: SiteIdSchema.optional(),
  link: LinkSchema.optional(),
  agent: AgentSchema.optional(),
}).superRefine((s, ctx) => {
  if ((s.name === undefined) === (s.count === undefined))
    ctx.addIssue({
      code: 'custom',
      message: "give either 'name' (one site) or 'count' and 'prefix' (that many sites), not both or neither",
    });
  else if (s.count !== undefined && s.prefix === undefined)
    ctx.addIssue({
      code: 'custom',
      path: ['prefix'],
      message: "with 'count', give 'prefix' (sites are <prefix>-001, …)",
    });
  else if (s.name !== undefined && s.prefix !== undefined)
    ctx.addIssue({
      code: 'custom',
      path: ['prefix'],
      message: "'prefix' goes with 'count', not with 'name'",
    });
});

export const TopologyFileSchema = strict({
  /** What the fleet is (free text, printed with the run). */
  description: z.string().max(500).optional(),
  /** Where the sites' windows are declared: each agent's `sync.contactWindows` (default) or the hub's `contactPlans.sites`. */
  windowsDeclaredAt: z.enum(['agent', 'hub']).optional(),
  /** What every site has unless its own entry says otherwise. */
  defaults: strict({ link: LinkSchema.optional(), agent: AgentSchema.optional() }).optional(),
  sites: z.array(SiteSchema).min(1),
  /** The relay (`relay-1`) the sites' links reach, and its link to the hub (default 20 ms, always up). */
  relay: strict({ link: LinkSchema.optional() }).optional(),
});
export type TopologyFile = z.infer<typeof TopologyFileSchema>;

/** A topology file made into the world's spec (`World`'s `siteSpecs`, `relayLink`, …). */
export interface Topology {
  /** The file as given on the command line. */
  file: string;
  /** sha256 of its bytes (16 hex): a replay names the file, the report says which contents it ran. */
  sha256: string;
  description: string | null;
  spec: Pick<WorldSpec, 'siteSpecs' | 'relayLink' | 'relayWindows' | 'relayFaults' | 'windowsDeclaredAt'> & {
    siteSpecs: readonly WorldSiteSpec[];
  };
}

/** Reads and checks a topology file: the topology, or every problem, each naming its field and what to do. */
export function loadTopology(
  file: string,
): { ok: true; topology: Topology } | { ok: false; problems: string[] } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    return { ok: false, problems: [`${file}: cannot read it (${(e as NodeJS.ErrnoException).code ?? e})`] };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return { ok: false, problems: [`${file}: not JSON (${(e as Error).message}); ${HELP}`] };
  }
  const r = parseTopology(json);
  if (!r.ok) return { ok: false, problems: r.problems.map((p) => `${file}: ${p}`) };
  return {
    ok: true,
    topology: {
      file,
      sha256: createHash('sha256').update(text).digest('hex').slice(0, 16),
      description: r.value.description ?? null,
      spec: resolveTopology(r.value),
    },
  };
}

/** Checks a topology file's JSON: its value, or one line per problem (`sites[1].link.contactWindows[0]: …`). */
export function parseTopology(
  json: unknown,
): { ok: true; value: TopologyFile } | { ok: false; problems: string[] } {
  const r = TopologyFileSchema.safeParse(json);
  if (!r.success)
    return { ok: false, problems: r.error.issues.map((i) => `${pathText(i.path)}: ${i.message}`) };
  const problems: string[] = [];
  const names = new Map<string, number>();
  let total = 0;
  r.data.sites.forEach((s, i) => {
    for (const n of namesOf(s)) {
      total++;
      if (names.has(n))
        problems.push(`sites[${i}]: site '${n}' is also sites[${names.get(n)}]; give each site its own name`);
      else names.set(n, i);
    }
  });
  if (total > MAX_TOPOLOGY_SITES)
    problems.push(`sites: ${total} sites; at most ${MAX_TOPOLOGY_SITES} (lower a 'count')`);
  return problems.length > 0 ? { ok: false, problems } : { ok: true, value: r.data };
}

function pathText(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(the file)';
  return path
    .map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i === 0 ? '' : '.'}${String(p)}`))
    .join('');
}

function namesOf(s: TopologyFile['sites'][number]): string[] {
  if (s.name !== undefined) return [s.name];
  return Array.from({ length: s.count ?? 0 }, (_, i) => `${s.prefix}-${String(i + 1).padStart(3, '0')}`);
}

/** The world's spec of a checked file: each site's link (profile, then defaults, then its own), windows, cadences. */
export function resolveTopology(t: TopologyFile): Topology['spec'] {
  const siteSpecs: WorldSiteSpec[] = [];
  for (const s of t.sites) {
    const link = resolveLink([t.defaults?.link, s.link]);
    const agent = resolveAgent([t.defaults?.agent, s.agent]);
    for (const name of namesOf(s)) siteSpecs.push({ name, ...link, ...agent });
  }
  const relay = t.relay?.link ? resolveLink([t.relay.link]) : null;
  return {
    siteSpecs,
    ...(relay
      ? {
          relayLink: relay.link,
          relayWindows: relay.windows,
          ...(relay.faults ? { relayFaults: relay.faults } : {}),
        }
      : {}),
    ...(t.windowsDeclaredAt ? { windowsDeclaredAt: t.windowsDeclaredAt } : {}),
  };
}

function resolveLink(layers: (LinkLayer | undefined)[]): {
  link: LinkSettingsInput;
  windows: string[];
  faults?: WorldFaults;
} {
  const given = layers.filter((l): l is LinkLayer => l !== undefined);
  const profileName = given.reduce<string | undefined>((p, l) => l.profile ?? p, undefined);
  const profile = profileName ? PROFILES[profileName] : undefined;
  let uplink: Partial<DirectionSettings> = { ...profile?.settings.uplink };
  let downlink: Partial<DirectionSettings> = { ...profile?.settings.downlink };
  let resetsPerMin = profile?.settings.resetsPerMin ?? 0;
  let whenDown = profile?.settings.whenDown ?? 'refuse';
  // a profile's schedule is its windows, written in the window syntax from the world's start
  let windows = profile ? linkContactWindows(profile.settings, WORLD_START) : [];
  let loss: LinkLayer['loss'] = {};
  for (const l of given) {
    if (l.lightTimeMs !== undefined) {
      uplink = { ...uplink, delayMs: l.lightTimeMs };
      downlink = { ...downlink, delayMs: l.lightTimeMs };
    }
    uplink = { ...uplink, ...l.uplink };
    downlink = { ...downlink, ...l.downlink };
    resetsPerMin = l.resetsPerMin ?? resetsPerMin;
    whenDown = l.whenDown ?? whenDown;
    loss = { ...loss, ...l.loss };
    if (l.contactWindows !== undefined) windows = [...l.contactWindows];
  }
  const link = LinkSettingsSchema.parse({ uplink, downlink, resetsPerMin, whenDown });
  const anyLoss = Object.values(loss ?? {}).some((v) => (v ?? 0) > 0);
  return {
    link,
    windows,
    ...(anyLoss
      ? {
          faults: {
            lossRate: loss?.lossRate ?? 0,
            answerLossRate: loss?.answerLossRate ?? 0,
            duplicateRate: loss?.duplicateRate ?? 0,
          },
        }
      : {}),
  };
}

function resolveAgent(layers: (AgentLayer | undefined)[]): Omit<WorldSiteSpec, 'name' | 'link' | 'windows'> {
  const out: Omit<WorldSiteSpec, 'name' | 'link' | 'windows'> = {};
  for (const a of layers) {
    if (!a) continue;
    if (a.components !== undefined) out.components = a.components;
    if (a.schedule !== undefined) out.schedule = a.schedule;
    if (a.sync) out.sync = { ...out.sync, ...a.sync };
  }
  return out;
}
