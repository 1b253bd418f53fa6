import { join } from 'node:path';
import { bearerToken, createHopServer, type HopServer } from '@driftline/hop';
import { WireError } from '@driftline/protocol';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { RelayKey } from '../adapters/fs/relayKey.js';
import type { RelayBackend } from '../adapters/hop/RelayBackend.js';
import type { RelayConfig } from '../config.js';

/**
 * The relay's hop server over its backend: tus uploads within the configured limits, `/metrics` for any
 * peer token or one issued with `relay token add <name> --metrics`, every exchange stamped with the
 * relay's key (decision 290).
 */
export function relayHopServer(
  cfg: RelayConfig,
  deps: {
    backend: RelayBackend;
    tokens: { mayReadMetrics(token: string): boolean };
    registry: Registry;
    log: Logger;
    now: () => number;
    key: RelayKey;
    /** An upload the tus endpoint refused (it logs it; the caller counts it). */
    onUploadRefused(peer: string, reason: string): void;
    revocationCheckMs?: number;
  },
): HopServer {
  const { backend, tokens } = deps;
  return createHopServer(backend, {
    uploads: {
      directory: join(cfg.dataDir, 'uploads'),
      maxSize: cfg.limits.maxUploadBytes,
      expirationMs: cfg.limits.uploadExpiryHours * 3_600_000,
      admit: (peer, size, reserved) => backend.admitUpload(peer, size, reserved),
      // logged by the tus endpoint; counted by the caller (issue 29: no quiet refusals)
      onRefused: (peer, reason) => deps.onUploadRefused(peer?.name ?? '', reason),
    },
    maxBatchBytes: cfg.limits.maxBatchBytes,
    maxConnectionsPerClient: cfg.limits.maxConnectionsPerClient,
    headersTimeoutMs: cfg.limits.headersTimeoutMs,
    metrics: {
      public: cfg.metrics.public,
      // any peer token, or one issued with `relay token add <name> --metrics`
      authorize: async (ctx) => {
        const token = bearerToken(ctx.get('authorization'));
        if (!token) throw new WireError('unauthorized', 'no bearer token in the Authorization header');
        if (!tokens.mayReadMetrics(token))
          throw new WireError('unauthorized', 'the bearer token is unknown or revoked');
      },
    },
    registry: deps.registry,
    logger: deps.log,
    now: deps.now,
    // every exchange this relay serves is stamped with its key (decision 290)
    stamp: deps.key,
    ...(deps.revocationCheckMs ? { revocationCheckMs: deps.revocationCheckMs } : {}),
  });
}
