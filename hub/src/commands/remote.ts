import { readFileSync } from 'node:fs';
import type { Readable } from 'node:stream';
import type { Command } from 'commander';
import type { z } from 'zod';

/**
 * The hub's API seen from another machine (a CI job): `--hub URL --token-file F`, with the token sent as
 * a bearer. Verbs that use it (`hub source publish`, `hub mirror publish`, `hub refs …`) never open the
 * hub's store, so they run where the repository or the mirror is, not on the hub.
 */
export interface RemoteOptions {
  hub?: string;
  tokenFile?: string;
}

/** Adds `--hub` and `--token-file` (with their environment defaults) to a remote verb. */
export function remoteOptions(cmd: Command): Command {
  return cmd
    .option('--hub <url>', "the hub's API address (default: $DRIFTLINE_HUB_URL)")
    .option(
      '--token-file <file>',
      'file holding a token of a hub user with the needed role (default: $DRIFTLINE_TOKEN_FILE)',
    );
}

/** A remote call that failed: what the hub (or the network) said, for one line on stderr. */
export class RemoteError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message);
  }
}

export interface RemoteHub {
  readonly url: string;
  /** GET or POST JSON; the answer is validated with `schema`. */
  json<T>(method: 'GET' | 'POST', path: string, schema: z.ZodType<T>, body?: unknown): Promise<T>;
  /** POST a file as the request body (`application/octet-stream`); the answer is validated with `schema`. */
  upload<T>(path: string, body: Readable | Buffer, size: number, schema: z.ZodType<T>): Promise<T>;
}

/** Reads `--hub`/`--token-file` (or the environment) into a client; a clear error names what is missing. */
export function remoteHub(o: RemoteOptions, env: NodeJS.ProcessEnv = process.env): RemoteHub {
  const url = (o.hub ?? env.DRIFTLINE_HUB_URL ?? '').replace(/\/+$/, '');
  const tokenFile = o.tokenFile ?? env.DRIFTLINE_TOKEN_FILE;
  if (!url) throw new RemoteError('give --hub <url> (or set DRIFTLINE_HUB_URL): the hub API address', null);
  if (!/^https?:\/\/[^\s]+$/.test(url)) throw new RemoteError(`--hub ${url} is not an http(s) URL`, null);
  if (!tokenFile)
    throw new RemoteError(
      'give --token-file <file> (or set DRIFTLINE_TOKEN_FILE): a file holding a hub user token (`hub user add`)',
      null,
    );
  let token: string;
  try {
    token = readFileSync(tokenFile, 'utf8').trim();
  } catch (e) {
    throw new RemoteError(`cannot read --token-file ${tokenFile}: ${(e as Error).message}`, null);
  }
  if (!token) throw new RemoteError(`--token-file ${tokenFile} is empty`, null);
  const call = async <T>(
    method: string,
    path: string,
    schema: z.ZodType<T>,
    init: { body?: BodyInit | Readable; type?: string; size?: number },
  ): Promise<T> => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' };
    if (init.type) headers['content-type'] = init.type;
    if (init.size !== undefined) headers['content-length'] = String(init.size);
    let res: Response;
    try {
      res = await fetch(`${url}${path}`, {
        method,
        headers,
        body: init.body as BodyInit | undefined,
        ...(init.body && typeof (init.body as Readable).pipe === 'function' ? { duplex: 'half' } : {}),
      } as RequestInit);
    } catch (e) {
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      throw new RemoteError(
        `cannot reach the hub at ${url}: ${cause?.code ?? cause?.message ?? (e as Error).message}`,
        null,
      );
    }
    const text = await res.text();
    let data: unknown = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      // Not JSON: reported below with the status.
    }
    if (!res.ok) {
      const err = (data as { error?: { code?: string; message?: string } } | null)?.error;
      const hint =
        res.status === 401
          ? ' (the token is not valid: check --token-file)'
          : res.status === 403
            ? ' (the token lacks the role this needs)'
            : '';
      throw new RemoteError(
        `the hub answered ${res.status}${err?.code ? ` ${err.code}` : ''}: ${err?.message ?? text.slice(0, 200)}${hint}`,
        res.status,
      );
    }
    const parsed = schema.safeParse(data);
    if (!parsed.success)
      throw new RemoteError(
        `the hub's answer to ${method} ${path} is not what this version expects`,
        res.status,
      );
    return parsed.data;
  };
  return {
    url,
    json: (method, path, schema, body) =>
      call(
        method,
        path,
        schema,
        body === undefined ? {} : { body: JSON.stringify(body), type: 'application/json' },
      ),
    upload: (path, body, size, schema) =>
      call('POST', path, schema, {
        body: body as BodyInit | Readable,
        type: 'application/octet-stream',
        size,
      }),
  };
}

/** Runs a remote verb's action: a `RemoteError` is one line on stderr and exit 2. */
export async function remoteAction(verb: string, fn: () => Promise<number | undefined>): Promise<never> {
  try {
    const code = await fn();
    process.exit(code ?? 0);
  } catch (e) {
    if (e instanceof RemoteError) console.error(`hub ${verb}: ${e.message}`);
    else console.error(`hub ${verb}: ${(e as Error).message}`);
    process.exit(2);
  }
}
