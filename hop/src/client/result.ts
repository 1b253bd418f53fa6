/**
 * Codes the client gives a failure the server did not name: `unreachable` (no answer: refused, reset,
 * timed out), `bad-answer` (an answer that is not what the hop API sends: not receipts, not a batch,
 * over the size cap), `http-error` (an error status without the `{ error: { code } }` body), `aborted`
 * (the caller stopped it), `hash-mismatch` (fetched bytes that do not hash to the blob's name), `stalled`
 * (a downlink answer that made no progress, or came slower than the floor rate: cut, docs/decisions/410).
 * Any other code is the one the server sent from protocol's ERRORS table.
 */
export type ClientCode =
  | 'unreachable'
  | 'bad-answer'
  | 'http-error'
  | 'aborted'
  | 'hash-mismatch'
  | 'stalled';

/**
 * A request that did not do what it was asked. `retryable` false means: sending the same request
 * unchanged will fail the same way (a 4xx other than 408/429, bytes that do not match their hash), so a
 * caller says so loudly instead of only backing off; true means a later attempt may succeed.
 */
export interface HopFailure {
  ok: false;
  code: ClientCode | (string & {});
  message: string;
  retryable: boolean;
  /** The HTTP status, when the server answered. */
  status?: number;
}

/** The outcome of one hop-API request. */
export type HopResult<T> = { ok: true; value: T } | HopFailure;

/** Whether a request answered with `status` may succeed when sent again unchanged. */
export const retryableStatus = (status: number): boolean => status >= 500 || status === 408 || status === 429;

/**
 * Whether a failure refused this request's content (too large, malformed): not retryable, and not the
 * caller itself (401/403: a token the server no longer takes fails every request alike; back off there).
 * Sending the same content again will fail the same way; other content may go.
 */
export const refusesRequest = (f: Pick<HopFailure, 'retryable' | 'status'>): boolean =>
  !f.retryable && f.status !== undefined && f.status !== 401 && f.status !== 403;

export const failure = (
  code: HopFailure['code'],
  message: string,
  retryable: boolean,
  status?: number,
): HopFailure => ({ ok: false, code, message, retryable, ...(status === undefined ? {} : { status }) });

/** A thrown fetch or stream error as a failure: the cause's code (ECONNREFUSED…) is kept in the message. */
export function thrown(e: unknown, prefix = 'unreachable'): HopFailure {
  const err = e as Error & { code?: string; cause?: { code?: string } };
  if (err.name === 'AbortError') return failure('aborted', `${prefix}: aborted`, true);
  // fetch's error names the code in its cause; node:http's carries it itself (and in its message)
  const code = err.cause?.code ?? (err.code && !err.message.includes(err.code) ? err.code : undefined);
  const cause = code ? ` (${code})` : '';
  return failure('unreachable', `${prefix}: ${err.message}${cause}`, true);
}

/** The failure for an error answer, from its `{ error: { code, message } }` body when it has one. */
export function answered(status: number, body: { ok: true; text: string } | { ok: false; reason: string }) {
  let code = 'http-error';
  let detail = body.ok ? body.text.slice(0, 300) : `(error body not read: ${body.reason})`;
  if (body.ok) {
    try {
      const parsed = JSON.parse(body.text) as { error?: { code?: unknown; message?: unknown } };
      if (parsed.error && typeof parsed.error.code === 'string') {
        code = parsed.error.code;
        detail = `${code}: ${String(parsed.error.message).slice(0, 500)}`;
      }
    } catch {}
  }
  return failure(code, `HTTP ${status} ${detail}`.trimEnd(), retryableStatus(status), status);
}

/** JSON of an answer's text, or null when it is not JSON. */
export function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
