import { z } from 'zod';

/**
 * Every error that crosses the wire, in one table. Relay and hub render these as
 * `{ "error": { "code", "message" } }` through one error middleware each.
 * A message says what went wrong and what to do about it.
 */
export const ERRORS = {
  'bad-request': { status: 400, message: 'the request is malformed; check it against the API description' },
  'bad-bundle': {
    status: 400,
    message: 'a bundle could not be decoded; it is truncated or not a Driftline bundle',
  },
  'unsupported-version': {
    status: 400,
    message: 'the bundle format version is not supported here; upgrade this node or the sender',
  },
  'unknown-kind': {
    status: 400,
    message: 'the bundle kind is not known here; upgrade this node or the sender',
  },
  'bad-query': { status: 400, message: 'a query parameter is missing or invalid' },
  unauthorized: {
    status: 401,
    message: 'missing or wrong credentials; present the bearer token issued for this peer',
  },
  forbidden: { status: 403, message: 'this credential may not do that' },
  csrf: {
    status: 403,
    message:
      'a write with the session cookie needs header X-Driftline-CSRF; read its value from GET /api/session',
  },
  'unknown-agent': {
    status: 403,
    message: 'the agent is not enrolled; enrol it with `hub enroll` using the line `edge-agent init` printed',
  },
  'revoked-agent': { status: 403, message: 'the agent was revoked; re-enrol it with a new key' },
  'bad-signature': {
    status: 403,
    message: 'the signature does not match the enrolled key; re-enrol the agent or check its key file',
  },
  'not-found': { status: 404, message: 'no such resource' },
  'method-not-allowed': { status: 405, message: 'this method is not allowed on this resource' },
  'request-timeout': {
    status: 408,
    message: 'the request headers did not arrive in time; send them in one go and retry',
  },
  'headers-too-large': {
    status: 431,
    message: 'the request headers are too large; send fewer or shorter headers',
  },
  conflict: { status: 409, message: 'the request conflicts with the current state; fetch it and retry' },
  expired: { status: 410, message: 'the bundle outlived its lifetime and was dropped' },
  'checksum-mismatch': {
    status: 460,
    message: 'the uploaded bytes do not match the announced sha256; upload again',
  },
  'payload-too-large': {
    status: 413,
    message: 'the request body is over the size limit; send smaller batches',
  },
  'unsupported-media-type': { status: 415, message: 'the content type is not accepted here' },
  'range-not-satisfiable': { status: 416, message: 'the requested range is outside the resource' },
  unprocessable: {
    status: 422,
    message: 'the request is well-formed but refers to something that cannot be used',
  },
  'too-many-requests': { status: 429, message: 'slow down; retry after the interval in Retry-After' },
  internal: { status: 500, message: 'an internal error occurred; the server log has the details' },
  unavailable: { status: 503, message: 'the service is not ready; retry later' },
  'store-unavailable': {
    status: 503,
    message:
      'the hub cannot reach its database; nothing was stored: keep what was sent and retry after Retry-After (the hub reconnects by itself)',
  },
  'insufficient-storage': {
    status: 507,
    message: 'the node is out of disk space; nothing was stored, retry when space is freed',
  },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERRORS;
export const ERROR_CODES = Object.keys(ERRORS) as ErrorCode[];
export const ErrorCodeSchema = z.enum(ERROR_CODES as [ErrorCode, ...ErrorCode[]]);

/** The wire shape of every error response. */
export const ErrorBodySchema = z.object({
  error: z.object({ code: z.string(), message: z.string() }),
});
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

/** The response for `code`: its status and body. `detail` is appended to the table's message. */
export function renderError(code: ErrorCode, detail?: string): { status: number; body: ErrorBody } {
  const entry = ERRORS[code];
  const message = detail ? `${detail} (${entry.message})` : entry.message;
  return { status: entry.status, body: { error: { code, message } } };
}

/**
 * An error a server throws to answer with a table entry. Carries `status` and `expose`, as koa expects,
 * so one middleware renders it; anything else becomes `internal`.
 */
export class WireError extends Error {
  readonly status: number;
  readonly expose = true;
  constructor(
    readonly code: ErrorCode,
    readonly detail?: string,
  ) {
    super(renderError(code, detail).body.error.message);
    this.name = 'WireError';
    this.status = ERRORS[code].status;
  }
}
