import { z } from 'zod';

/**
 * The config keys every hop server has (hub.yaml and relay.yaml `limits`), so both programs take and
 * document them the same way. Pass the parsed values to `createHopServer`.
 */
export const hopLimitFields = {
  maxBatchBytes: z
    .number()
    .int()
    .positive()
    .default(8 * 1024 * 1024)
    .describe('Largest POST /v1/bundles body, compressed and inflated, bytes (413 above).'),
  maxUploadBytes: z
    .number()
    .int()
    .positive()
    .default(2 * 1024 ** 3)
    .describe('Largest tus upload (a blob), bytes (413 at creation).'),
  maxConnectionsPerClient: z
    .number()
    .int()
    .positive()
    .default(64)
    .describe(
      'Connections open at once from one client address; more get 429 and are closed (raise it behind a proxy).',
    ),
  headersTimeoutMs: z
    .number()
    .int()
    .positive()
    .default(60_000)
    .describe("A request's headers must arrive within this, ms (408 and closed otherwise)."),
};
