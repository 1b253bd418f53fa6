import { readFileSync } from 'node:fs';
import type { AgentConfig } from '../config.js';

/** What `config check --online` found at one upstream. */
export interface UpstreamReport {
  url: string;
  /** `GET /v1/health` answered 200. */
  answers: boolean;
  /** Who answered (`relay relay-1`, `hub hub`), from the health document. */
  server?: string;
  /** The token was accepted for this site's downlink: true, false (401/403), or null when not known. */
  tokenAccepted: boolean | null;
  /** What went wrong, in words. */
  error?: string;
}

const TIMEOUT_MS = 15_000;

const get = (url: string, headers: Record<string, string> = {}) =>
  fetch(url, { headers, signal: AbortSignal.timeout(TIMEOUT_MS), redirect: 'manual' });

/** fetch says `fetch failed`; the reason (ECONNREFUSED, a timeout) is in its cause. */
const netError = (e: unknown): string => {
  const cause = (e as { cause?: { message?: string } }).cause;
  return cause?.message ?? (e as Error).message;
};

/** The `{ error: { code, message } }` body of a refusal, as one line. */
async function wireError(res: Response): Promise<string> {
  try {
    const body = (await res.json()) as { error?: { code?: string; message?: string } };
    if (body.error) return `${body.error.code}: ${body.error.message}`;
  } catch {
    // no JSON body
  }
  return `HTTP ${res.status}`;
}

/**
 * Tries one upstream: `GET /v1/health`, then `GET /v1/bundles?for=<site>&limit=1` with the token (a read
 * of at most one downlink bundle, which changes nothing there) to see whether the token is accepted.
 */
export async function probeUpstream(site: string, url: string, tokenFile: string): Promise<UpstreamReport> {
  const report: UpstreamReport = { url, answers: false, tokenAccepted: null };
  try {
    const health = await get(`${url}/v1/health`);
    report.answers = health.ok;
    if (health.ok) {
      const h = (await health.json().catch(() => ({}))) as { role?: string; name?: string };
      if (h.role) report.server = `${h.role} ${h.name ?? ''}`.trim();
    } else {
      report.error = `GET /v1/health answered ${await wireError(health)}`;
      return report;
    }
  } catch (e) {
    report.error = `GET /v1/health: ${netError(e)}`;
    return report;
  }
  let token: string;
  try {
    token = readFileSync(tokenFile, 'utf8').trim();
  } catch {
    return report;
  }
  try {
    const res = await get(`${url}/v1/bundles?for=${encodeURIComponent(site)}&limit=1`, {
      authorization: `Bearer ${token}`,
    });
    if (res.ok) {
      report.tokenAccepted = true;
      await res.body?.cancel();
    } else if (res.status === 401 || res.status === 403) {
      report.tokenAccepted = false;
      report.error = `the token was refused: ${await wireError(res)}`;
    } else report.error = `GET /v1/bundles answered ${await wireError(res)}`;
  } catch (e) {
    report.error = `GET /v1/bundles: ${netError(e)}`;
  }
  return report;
}

/** Tries every upstream of the config, in order. */
export function probeUpstreams(config: AgentConfig): Promise<UpstreamReport[]> {
  return Promise.all(config.upstreams.map((u) => probeUpstream(config.site, u.url, u.tokenFile)));
}
