import { type HopTransport, tokenFromFile } from '@driftline/hop/client';
import type { Logger } from 'pino';
import type { RelayKey } from '../adapters/fs/relayKey.js';
import { HttpUpstream } from '../adapters/http/HttpUpstream.js';
import type { RelayConfig, ResolvedUpstream } from '../config.js';
import type { CustodyChains } from '../core/custodyChains.js';
import type { UpstreamSlot } from '../core/Forwarder.js';

/**
 * The relay's upstreams over HTTP, each in a forwarding slot (its plan, failures, retry time). A token
 * file is read again when it changes (`hub peer rotate`): no restart (decision 240).
 */
export function relayUpstreams(
  cfg: RelayConfig,
  upstreams: ResolvedUpstream[],
  deps: { now: () => number; log: Logger; key: RelayKey; chains: CustodyChains; transport?: HopTransport },
): { http: HttpUpstream[]; slots: UpstreamSlot[] } {
  const { log } = deps;
  const tokenOf = (u: ResolvedUpstream, file: string | undefined) =>
    file
      ? tokenFromFile(file, {
          initial: u.token,
          onChange: (path) =>
            log.info({ upstream: u.name, tokenFile: path }, 'token file changed; using the new token'),
          onProblem: (path, problem) =>
            log.warn({ upstream: u.name, tokenFile: path }, `token file: ${problem}`),
        })
      : u.token;
  const http = upstreams.map(
    (u, i) =>
      new HttpUpstream(
        u.name,
        u.url,
        tokenOf(u, cfg.upstreams[i]?.tokenFile),
        cfg.forward.requestTimeoutMs,
        cfg.limits.maxResponseBytes,
        deps.now,
        { key: deps.key, chains: deps.chains },
        cfg.forward.stallS * 1000,
        deps.transport,
      ),
  );
  const slots: UpstreamSlot[] = upstreams.map((u, i) => ({
    upstream: http[i] as HttpUpstream,
    plan: u.plan,
    failures: 0,
    retryAt: 0,
  }));
  return { http, slots };
}
