import { type HopTransport, tokenFromFile } from '@driftline/hop/client';
import { readToken } from '../adapters/fs/agentKeys.js';
import { HttpUplink } from '../adapters/http/HttpUplink.js';
import type { Wire2LinkOptions } from '../adapters/http/Wire2Link.js';
import { Wire2State, wire2StatePath } from '../adapters/http/wire2State.js';
import type { SqliteUrlStorage } from '../adapters/tus/SqliteUrlStorage.js';
import type { AgentConfig } from '../config.js';
import type { Logger } from '../ports/Logger.js';

/**
 * The agent's upstreams: one `HttpUplink` each, and the same tokens for publication downloads. Each
 * token file is read again when it changes (a rotated token), logged once: no restart (decision 240).
 */
export function agentUplinks(
  config: AgentConfig,
  deps: {
    urlStorage: SqliteUrlStorage;
    now: () => number;
    log: Logger;
    privateKey?: CryptoKey;
    /** `ed25519:…` of `privateKey`: registered with upstreams for hop v2 (`sync.wire: 2`). */
    publicKey?: string;
    /** The ledger's delta as a heartbeat (decision 500), for v2 pushes. */
    heartbeatForm?: Wire2LinkOptions['heartbeatForm'];
    /** The ledger's round under way (decision 525), for v2 pushes. */
    ackLaterS?: Wire2LinkOptions['ackLaterS'];
    /** What carries every exchange with the upstreams (default: sockets; a deterministic world's links). */
    transport?: HopTransport;
  },
): {
  uplinks: HttpUplink[];
  tokens: { url: string; token: string | (() => string); transport?: HopTransport }[];
  /** The agent's hop v2 sequences and pushes (`sync.wire: 2`), for the acks that name them. */
  wire2: Wire2State | null;
} {
  const { log } = deps;
  const wire2 =
    config.sync.wire === 2 && deps.privateKey && deps.publicKey
      ? new Wire2State(wire2StatePath(config.dataDir))
      : null;
  const tokens = config.upstreams.map((u) => ({
    url: u.url,
    token: tokenFromFile(u.tokenFile, {
      initial: readToken(u.tokenFile),
      onChange: (path) =>
        log.info({ upstream: u.url, tokenFile: path }, 'token file changed; using the new token'),
      onProblem: (path, problem) => log.warn({ upstream: u.url, tokenFile: path }, `token file: ${problem}`),
    }),
    ...(deps.transport ? { transport: deps.transport } : {}),
  }));
  const uplinks = tokens.map(
    ({ url, token }) =>
      new HttpUplink({
        url,
        token,
        urlStorage: deps.urlStorage,
        // Exchanges are timed with the agent's clock port, the one its results are stamped with.
        now: deps.now,
        source: `${config.site}/${config.agent}`,
        trustedClock: config.clock === 'trusted',
        // a downlink answer that stalls or drips is cut: one upstream never holds up another (decision 410)
        stallMs: config.sync.stallS * 1000,
        // the agent signs its own clock term with its key (decision 290)
        ...(deps.privateKey ? { signKey: deps.privateKey } : {}),
        // hop v2 where the upstream speaks it (docs/decisions/495-hop-v2-on-the-agent-link.md), on h2c
        // where it states that too (issue 46)
        h2c: config.sync.h2c,
        ...(deps.transport ? { transport: deps.transport } : {}),
        ...(wire2 && deps.privateKey && deps.publicKey
          ? {
              wire2: {
                site: config.site,
                agent: config.agent,
                privateKey: deps.privateKey,
                publicKey: deps.publicKey,
                state: wire2,
                ...(deps.heartbeatForm ? { heartbeatForm: deps.heartbeatForm } : {}),
                ...(deps.ackLaterS ? { ackLaterS: deps.ackLaterS } : {}),
              },
            }
          : {}),
      }),
  );
  return { uplinks, tokens, wire2 };
}
