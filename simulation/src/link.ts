import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createControlServer } from './adapters/http/controlServer.js';
import { type ForcedState, LinkProxy, type LinkStats } from './adapters/net/LinkProxy.js';
import { profileSettings } from './core/link/profiles.js';
import {
  type LinkSettings,
  type LinkSettingsInput,
  mergeSettings,
  parseSettings,
} from './core/link/settings.js';
import { seededRandom } from './core/rng.js';
import { type Logger, silentLogger } from './ports/Logger.js';

export interface LinkConfig {
  /** Shown in logs and stats. */
  name?: string;
  /** Where the link listens; port 0 picks a free one. Host defaults to 127.0.0.1. */
  listen?: { host?: string; port?: number };
  target: { host?: string; port: number };
  /** A named profile (lan, geo, leo-windows, polar, mars, flaky) to start from. */
  profile?: string;
  /** Time compression for the profile: delays and windows are divided by it. */
  timeScale?: number;
  /** Settings on top of the profile (deep-merged). */
  settings?: LinkSettingsInput;
  /** The control API's port (0 = free one), or false for none. Default 0. */
  controlPort?: number | false;
  /** Seed for jitter, resets and stalls, so a run can be repeated. */
  seed?: number;
  logger?: Logger;
}

export interface LinkHandle {
  /** The port the link listens on. */
  port: number;
  /** The control API's base URL (null without one), plus the same operations in-process. */
  control: {
    url: string | null;
    settings(): LinkSettings;
    /** Deep-merges a partial settings object; answers the problems when it is invalid. */
    update(patch: LinkSettingsInput): { ok: true } | { ok: false; problems: string[] };
    force(state: ForcedState): void;
  };
  stats(): LinkStats;
  close(): Promise<void>;
}

/** Settings from an optional profile, time scale and overrides; problems named when invalid. */
export function resolveSettings(
  c: Pick<LinkConfig, 'profile' | 'timeScale' | 'settings'>,
): { ok: true; settings: LinkSettings; oneWayDelayMs: number } | { ok: false; problems: string[] } {
  let base: LinkSettings;
  if (c.profile) {
    const p = profileSettings(c.profile, c.timeScale ?? 1);
    if (!p.ok) return { ok: false, problems: [p.problem] };
    base = p.settings;
  } else {
    const p = parseSettings({});
    if (!p.ok) return p;
    base = p.settings;
  }
  const r = c.settings ? mergeSettings(base, c.settings) : { ok: true as const, settings: base };
  if (!r.ok) return r;
  return { ok: true, settings: r.settings, oneWayDelayMs: r.settings.uplink.delayMs };
}

/** Starts one emulated link: a TCP proxy from `listen` to `target` and its control API. */
export async function startLink(config: LinkConfig): Promise<LinkHandle> {
  const resolved = resolveSettings(config);
  if (!resolved.ok) throw new Error(`invalid link config: ${resolved.problems.join('; ')}`);
  const name = config.name ?? config.profile ?? 'link';
  const listenHost = config.listen?.host ?? '127.0.0.1';
  const targetHost = config.target.host ?? '127.0.0.1';
  const proxy = new LinkProxy({
    name,
    listenHost,
    listenPort: config.listen?.port ?? 0,
    targetHost,
    targetPort: config.target.port,
    settings: resolved.settings,
    now: () => performance.now(),
    random: seededRandom(config.seed ?? 1),
    logger: config.logger ?? silentLogger,
  });
  const port = await proxy.start();
  const describe = () => ({
    name,
    listen: `${listenHost}:${port}`,
    target: `${targetHost}:${config.target.port}`,
  });
  let control: Server | null = null;
  let url: string | null = null;
  if (config.controlPort !== false) {
    control = createControlServer(proxy, describe);
    await new Promise<void>((resolve, reject) => {
      control!.once('error', reject);
      control!.listen(config.controlPort || 0, listenHost, () => resolve());
    });
    url = `http://${listenHost}:${(control.address() as AddressInfo).port}`;
  }
  return {
    port,
    control: {
      url,
      settings: () => proxy.settings,
      update(patch) {
        const r = mergeSettings(proxy.settings, patch);
        if (!r.ok) return r;
        proxy.setSettings(r.settings);
        return { ok: true };
      },
      force: (state) => proxy.force(state),
    },
    stats: () => proxy.stats(),
    async close() {
      await proxy.close();
      if (control) {
        control.closeAllConnections();
        await new Promise<void>((resolve) => control!.close(() => resolve()));
      }
    },
  };
}
