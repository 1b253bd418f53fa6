import type { AuditAction, Role } from '@driftline/protocol';
import type { Context } from 'koa';
import type { z } from 'zod';
import { API_SCHEMAS, type SchemaName } from '../openapiShared.js';
import type { RouteDeps } from './deps.js';

/** Methods the people's side answers (every GET also answers HEAD). */
export type Method = 'GET' | 'POST' | 'DELETE';

/** Who may call a route: a role (every role implies viewer), or `open` (the route authenticates itself). */
export type Need = Role | 'open';

/** A JSON answer: its status and the component schema it is checked against before it leaves. */
export interface JsonAnswer<S extends SchemaName> {
  status: 200 | 201;
  schema: S;
  /** What the answer is, for `/api/openapi.json`. */
  description: string;
  /**
   * Checked against the schema but sent as the handler built it, field order included (the deprecated
   * `/api/bundles` answers put `bundleId` first, as they always did); otherwise the schema's output is sent.
   */
  asBuilt?: true;
}

/** An answer the handler writes itself (a stream, an empty 204, the OpenAPI document), as OpenAPI has it. */
export interface RawAnswer {
  status: 200 | 204;
  raw: object;
}

/** What `/api/openapi.json` says of a route beyond what the entry's schemas give. */
export interface RouteDoc {
  summary: string;
  description?: string;
  deprecated?: boolean;
  /** Descriptions of query parameters that replace their schema's `.describe()` text. */
  queryText?: Record<string, string>;
  /** Descriptions of path parameters. */
  pathText?: Record<string, string>;
  /** Parameters the schemas cannot give (headers), in OpenAPI form. */
  headers?: object[];
  /** The other answers it may give, besides the one `response` names (and 401/403/429/503, added). */
  others?: Record<string, object>;
  /** False for answers without an ETag (a stream); GETs otherwise declare 304. */
  conditional?: boolean;
}

/** When a route was deprecated (RFC 9745: `@` and Unix seconds) and the path that replaces it. */
export interface Deprecation {
  at: string;
  successor: string;
}

/**
 * A request that exercises the route, and the status it must get: `hub/test/openapi.test.ts` sends it
 * (with an admin credential, then with none) and checks the answer against the document. Written with
 * the route, so a new read-only endpoint needs no line in `hub/test/openapiExamples.ts`.
 */
export interface RouteExample {
  /** Path and query from the root, against the fixture hub (site `ship-7`, environment `prod`, component `net`). */
  url: string;
  status: number;
}

/** A JSON body: the component schema it is declared as, and the most bytes the handler reads. */
export interface JsonBody {
  schema: SchemaName;
  maxBytes: number;
}

/** A streamed file body (`application/octet-stream`). */
export interface StreamBody {
  stream: true;
}

type Query = z.ZodObject | undefined;
type Parsed<Q extends Query> = Q extends z.ZodObject ? z.infer<Q> : Record<string, never>;
type Body<A> = A extends JsonAnswer<infer S> ? z.input<(typeof API_SCHEMAS)[S]> | WithStatus : never;
/** A JSON route's handler answers its body; a raw one writes `ctx` itself. */
type Handler<Q extends Query, A> = [A] extends [JsonAnswer<SchemaName>]
  ? (ctx: Context, deps: RouteDeps, query: Parsed<Q>) => Body<A> | Promise<Body<A>>
  : (ctx: Context, deps: RouteDeps, query: Parsed<Q>) => void | Promise<void>;

/** An answer with another status than the route's usual one (e.g. 200 for a repeat of a 201). */
export class WithStatus {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {}
}

/**
 * One endpoint of `/api`, declared once: the Koa router, the auth guard's policy and
 * `/api/openapi.json` are all generated from these entries (docs/decisions/280-one-place-per-decision.md).
 */
export interface RouteSpec<Q extends Query, A extends JsonAnswer<SchemaName> | RawAnswer> {
  method: Method;
  /** Path with `:param` segments, from the root (`/api/…`). */
  path: string;
  /** Required: a route without a role does not compile. */
  role: Need;
  /** The audit action a call records (outcome from its status); reads record nothing. */
  audit?: AuditAction;
  /** The query the route reads; parsed before the handler runs (400 `bad-query` naming the field). */
  query?: Q;
  /**
   * Set when the handler parses `query` itself, after checks that must come first (a publication's
   * Content-Length) or leniently (as it always has): the schema then only declares the parameters.
   */
  queryByHandler?: true;
  body?: JsonBody | StreamBody;
  response: A;
  /** A deprecated route: every answer carries `Deprecation` and a `Link` to its successor (decision 170). */
  deprecation?: Deprecation;
  doc: RouteDoc;
  /** Requests `/api/openapi.json`'s test sends to it; routes without one are exercised from `openapiExamples.ts`. */
  examples?: readonly RouteExample[];
  /** Answers the body (checked against `response.schema`), or writes `ctx` itself for a raw answer. */
  handler: Handler<Q, A>;
}

/** A route with its types erased, as the table holds it. */
export interface Route {
  method: Method;
  path: string;
  role: Need;
  audit?: AuditAction;
  query?: z.ZodObject;
  queryByHandler?: true;
  body?: JsonBody | StreamBody;
  response: JsonAnswer<SchemaName> | RawAnswer;
  deprecation?: Deprecation;
  doc: RouteDoc;
  examples?: readonly RouteExample[];
  handler: (ctx: Context, deps: RouteDeps, query: never) => unknown;
}

/** Declares a route, checking its handler against its query and answer schemas. */
export function route<Q extends Query = undefined, A extends JsonAnswer<SchemaName> | RawAnswer = RawAnswer>(
  spec: RouteSpec<Q, A>,
): Route {
  return spec as unknown as Route;
}

/** The zod schema a JSON answer is checked against. */
export const answerSchema = (a: JsonAnswer<SchemaName>): z.ZodType => API_SCHEMAS[a.schema] as z.ZodType;
