import { createHopServer, type HopBackend, type HopServer } from '@driftline/hop';
import { WireError } from '@driftline/protocol';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { DiskCap } from '../adapters/fs/DiskCap.js';
import { type ApiServer, createApiServer } from '../adapters/http/apiServer.js';
import type { HubAuth } from '../adapters/http/auth.js';
import { mountPeopleSide, type PeopleSideDeps } from '../adapters/http/peopleSide.js';
import { policyFor } from '../adapters/http/policy.js';
import { storeErrorToWire } from '../adapters/http/storeErrors.js';
import { type HubConfig, listenersOf } from '../config.js';
import type { Clock } from '../ports/Clock.js';

/**
 * The hop server over `backend` and the people's side (`/api`, SSE, UI, `/metrics` for whom the policy
 * lets): on the hop listener when the config has one listener, else on an API server of its own.
 */
export function hubServers(
  config: HubConfig,
  d: {
    backend: HopBackend;
    disk: DiskCap;
    uploadsDir: string;
    registry: Registry;
    logger: Logger;
    clock: Clock;
    auth: HubAuth;
    people: PeopleSideDeps;
    revocationCheckMs?: number;
  },
): { hop: HopServer; api: ApiServer | null; listeners: ReturnType<typeof listenersOf> } {
  const listeners = listenersOf(config);
  const split = !('shared' in listeners);
  const hop = createHopServer(d.backend, {
    uploads: {
      directory: d.uploadsDir,
      maxSize: config.limits.maxUploadBytes,
      admit: (_peer, size, reserved) => d.disk.check(size, reserved.total),
    },
    mapError: storeErrorToWire,
    ...(d.revocationCheckMs ? { revocationCheckMs: d.revocationCheckMs } : {}),
    maxBatchBytes: config.limits.maxBatchBytes,
    maxConnectionsPerClient: config.limits.maxConnectionsPerClient,
    headersTimeoutMs: config.limits.headersTimeoutMs,
    registry: d.registry,
    logger: d.logger,
    // Exchanges are stamped with the hub's clock: the one agents' offsets are estimated against.
    now: () => d.clock.now(),
    metrics: {
      authorize: split
        ? async () => {
            throw new WireError('not-found', '/metrics is served on the api listener (listen.api)');
          }
        : (ctx) => d.auth.check(ctx, policyFor('GET', '/metrics')),
    },
    ...(split ? {} : { extend: (app) => mountPeopleSide(app, d.people) }),
  });
  const api = split
    ? createApiServer(
        d.backend,
        d.logger,
        (app) => mountPeopleSide(app, { ...d.people, metricsRegistry: d.registry }),
        {
          maxConnectionsPerClient: config.limits.maxConnectionsPerClient,
          headersTimeoutMs: config.limits.headersTimeoutMs,
        },
      )
    : null;
  return { hop, api, listeners };
}
