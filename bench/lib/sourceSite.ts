import { readFileSync, writeFileSync } from 'node:fs';
import { brotliDecompressSync } from 'node:zlib';
import { decodeBatch, decodeBundle } from '@driftline/protocol';
import type { LinkHandle } from '@driftline/simulation';
import { stringify } from 'yaml';
import type { TappedResponse } from './httpTap.js';

/** Time-compressed settings (as the end-to-end test): besides light time, they set the pace. */
export const SOURCE_SETTINGS = {
  agentSyncIntervalS: 1,
  agentBundleRetryMs: 500,
  relayBundleIntervalMs: 500,
  relayPullIntervalMs: 1000,
};

/** relay.yaml for one site, forwarding to the hub at `upstreamUrl`. */
export function writeRelayConfig(
  path: string,
  o: { dataDir: string; port: number; site: string; upstreamUrl: string; token: string },
): void {
  writeFileSync(
    path,
    stringify({
      name: 'ground-1',
      dataDir: o.dataDir,
      listen: { port: o.port },
      sites: [o.site],
      upstreams: [{ url: o.upstreamUrl, token: o.token }],
      forward: {
        idleMs: 300,
        pullIntervalMs: SOURCE_SETTINGS.relayPullIntervalMs,
        backoffBaseMs: 300,
        backoffMaxMs: 1000,
      },
      publications: { intervalMs: SOURCE_SETTINGS.relayBundleIntervalMs },
    }),
  );
}

/** agent.yaml: one component planned from repository `infra` (refs main and pr/*), data in ./data. */
export function writeAgentConfig(path: string, o: { site: string; upstreamUrl: string }): void {
  writeFileSync(
    path,
    stringify({
      site: o.site,
      agent: 'a1',
      dataDir: './data',
      hubPublicKeyFile: './hub.pub',
      upstreams: [{ url: o.upstreamUrl, tokenFile: './token' }],
      components: [
        {
          name: 'network',
          source: { repo: 'infra', path: 'stacks/network', refs: ['main', 'pr/*'] },
          environments: ['prod'],
          schedule: '0 0 1 1 *',
        },
      ],
      sync: {
        intervalS: SOURCE_SETTINGS.agentSyncIntervalS,
        jitterS: 0,
        backoffBaseS: 0.5,
        backoffCapS: 2,
        planOnStart: false,
      },
      publications: { retryMs: SOURCE_SETTINGS.agentBundleRetryMs },
    }),
  );
}

/**
 * Samples what a link delivers toward the site every 20 ms; `bursts` groups the increments in a window
 * (a pause over 300 ms starts a new one: about one HTTP response each).
 */
export function downlinkSampler(link: LinkHandle) {
  const samples: Array<{ t: number; bytes: number }> = [];
  const timer = setInterval(() => {
    const bytes = link.stats().downlink.bytes;
    if (bytes !== samples.at(-1)?.bytes) samples.push({ t: performance.now(), bytes });
  }, 20);
  return {
    bursts(from: number, to: number) {
      const out: Array<{ atMs: number; bytes: number }> = [];
      let prev = [...samples].reverse().find((x) => x.t <= from)?.bytes ?? 0;
      let lastT = Number.NEGATIVE_INFINITY;
      for (const x of samples) {
        if (x.t <= from || x.t > to) continue;
        if (x.t - lastT > 300) out.push({ atMs: Math.round(x.t - from), bytes: 0 });
        out.at(-1)!.bytes += x.bytes - prev;
        prev = x.bytes;
        lastT = x.t;
      }
      return out;
    },
    stop: () => clearInterval(timer),
  };
}

/** The agent's pino log lines (JSON, `time` in ms since the epoch) written at or after `since`. */
export function agentLogLines(path: string, since: number): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line.startsWith('{')) continue;
    const o = JSON.parse(line) as Record<string, unknown>;
    if ((o.time as number) >= since) out.push(o);
  }
  return out;
}

/**
 * The kinds of the bundles a tapped downlink answer (`GET /v1/bundles`, body kept) carried, in order;
 * empty for a bare 304 or an empty page. Decoded as the agent does: brotli when so encoded, then the batch.
 */
export function downlinkKinds(r: TappedResponse): string[] {
  if (!r.body || r.body.length === 0) return [];
  const raw = r.encoding === 'br' ? brotliDecompressSync(r.body) : r.body;
  const batch = decodeBatch(new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength), 10_000);
  if (!batch.ok) return [`undecodable: ${batch.error.message}`];
  return batch.value.map((b) => {
    const d = decodeBundle(b);
    return d.ok ? d.value.header.kind : `undecodable: ${d.error.message}`;
  });
}
