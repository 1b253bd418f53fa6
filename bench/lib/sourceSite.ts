import { readFileSync, writeFileSync } from 'node:fs';
import { brotliDecompressSync } from 'node:zlib';
import { decodeBatch, decodeBundle, wire2 } from '@driftline/protocol';
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

/**
 * agent.yaml: one component planned from repository `infra` (refs main and pr/*), data in ./data; `wire: 1`
 * unless told `wire: 2` (hop v2 on h2c; the agent's own default is 2).
 */
export function writeAgentConfig(path: string, o: { site: string; upstreamUrl: string; wire?: 1 | 2 }): void {
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
        // said either way: v2 is the agent's default since decision 495's change of 2026-11-30
        wire: o.wire ?? 1,
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
 * The kinds of what a tapped hop v2 answer (`POST /v2`, h2c, body kept) carried: a pull answer's items
 * (a v2 message by its kind, a v1 bundle by its header's), `custody` for a push's answer; empty for 204.
 */
export function v2AnswerKinds(r: TappedResponse): string[] {
  if (!r.body || r.body.length === 0) return [];
  const tries = [r.body];
  try {
    tries.push(brotliDecompressSync(r.body));
  } catch {
    // not brotli: read as it came
  }
  for (const raw of tries) {
    const bytes = new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength);
    if (wire2.isWire2Message(bytes)) {
      const m = wire2.decodeMessage(bytes);
      return [m.ok ? m.value.kind : `undecodable: ${m.error.message}`];
    }
    const a = wire2.decodePullAnswer(bytes);
    if (!a.ok) continue;
    return a.value.items.map((b) => {
      if (wire2.isWire2Message(b)) {
        const m = wire2.decodeMessage(b);
        return m.ok ? (m.value.kind === 'publication' ? 'blob' : m.value.kind) : 'undecodable';
      }
      const d = decodeBundle(b);
      return d.ok ? d.value.header.kind : `undecodable: ${d.error.message}`;
    });
  }
  return ['undecodable'];
}

/** A tapped v2 pull answer's cursor and item sizes (brotli or not), for the log; null when it is not one. */
export function v2AnswerShape(r: TappedResponse): { cursor: number; items: number[]; br: boolean } | null {
  if (!r.body || r.body.length === 0) return null;
  for (const br of [false, true]) {
    let raw: Buffer;
    try {
      raw = br ? brotliDecompressSync(r.body) : r.body;
    } catch {
      continue;
    }
    const a = wire2.decodePullAnswer(new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength));
    if (a.ok) return { cursor: a.value.cursor, items: a.value.items.map((i) => i.length), br };
  }
  return null;
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
