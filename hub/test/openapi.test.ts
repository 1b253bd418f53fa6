import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { API_SCHEMAS, type SchemaName } from '../src/adapters/http/openapiShared.js';
import { startHub, type TestHub } from './hubFixture.js';
import { examples } from './openapiExamples.js';
import { opKey, routerOps, routerPath } from './routes.js';

interface Response_ {
  content?: Record<string, { schema?: { $ref?: string } }>;
  headers?: Record<string, unknown>;
}
interface Operation {
  parameters?: { name: string; in: string }[];
  responses: Record<string, Response_>;
  security?: Record<string, string[]>[];
}
interface Doc {
  paths: Record<string, Record<string, Operation>>;
}

const hubs: TestHub[] = [];
afterEach(async () => {
  for (const h of hubs.splice(0)) await h.close();
});

/** Operations served outside Koa's routers: tus beside Koa, and the dashboard's files (a middleware). */
const OUTSIDE_ROUTERS = new Set([
  'POST /v1/uploads',
  'OPTIONS /v1/uploads',
  'HEAD /v1/uploads/:uploadId',
  'PATCH /v1/uploads/:uploadId',
  'DELETE /v1/uploads/:uploadId',
  'OPTIONS /v1/uploads/:uploadId',
  'GET /assets/:file',
]);

const docOps = (doc: Doc) =>
  Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
  );

async function readDoc(h: TestHub, authorization: string): Promise<Doc> {
  return (await (await fetch(`${h.url}/api/openapi.json`, { headers: { authorization } })).json()) as Doc;
}

describe('/api/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const h = await startHub();
    hubs.push(h);
    const { admin } = await examples(h);
    const doc = await readDoc(h, admin);
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeTruthy();
  });

  it('declares every route the routers register, with its path parameters, and nothing else', async () => {
    const shared = await startHub();
    const split = await startHub({
      listen: { hop: { host: '127.0.0.1', port: 0 }, api: { host: '127.0.0.1', port: 0 } },
    });
    hubs.push(shared, split);
    const { admin } = await examples(shared);
    const doc = await readDoc(shared, admin);
    const served = [
      ...routerOps(shared.hub.hop.app),
      ...routerOps(split.hub.hop.app),
      ...(split.hub.api ? routerOps(split.hub.api.app) : []),
    ];
    expect(split.hub.api).not.toBeNull();
    const declared = new Map(
      docOps(doc).map((o) => [opKey({ method: o.method, path: routerPath(o.path) }), o]),
    );
    const undeclared = served.filter((r) => !declared.has(opKey(r))).map(opKey);
    expect(undeclared, 'routes the hub serves but the document does not declare').toEqual([]);
    const servedKeys = new Set([...served.map(opKey), ...OUTSIDE_ROUTERS]);
    const stale = [...declared.keys()].filter((k) => !servedKeys.has(k));
    expect(stale, 'operations the document declares but no router serves').toEqual([]);
    for (const r of served) {
      const op = declared.get(opKey(r))?.op;
      const inPath = (op?.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name);
      expect(inPath.sort(), `${opKey(r)} path parameters`).toEqual([...r.params].sort());
    }
  });
});

/**
 * Every operation the document declares, exercised by its example (`openapiExamples.ts`) with a credential
 * and then without: the hub and its examples are made once, each pass is its own test.
 */
describe('/api/openapi.json against the hub that serves it', () => {
  let h: TestHub;
  let ex: Awaited<ReturnType<typeof examples>>;
  let ops: Map<string, ReturnType<typeof docOps>[number]>;
  beforeAll(async () => {
    h = await startHub();
    ex = await examples(h);
    const doc = await readDoc(h, ex.admin);
    ops = new Map(docOps(doc).map((o) => [`${o.method} ${o.path}`, o]));
  });
  afterAll(async () => {
    await h?.close();
  });

  /** What is wrong with one answer, against the operation the document declares for `key`. */
  const check = async (
    problems: string[],
    key: string,
    url: string,
    init: RequestInit,
    want: number | null,
  ) => {
    const op = ops.get(key);
    if (!op) return problems.push(`${key}: not in the document`);
    const res = await fetch(url, { ...init, redirect: 'manual' });
    const what = `${key} ${url.replace(/^http:\/\/[^/]+/, '')} → ${res.status}`;
    if (want !== null && res.status !== want) problems.push(`${what}, expected ${want}`);
    const declared = op.op.responses[String(res.status)];
    if (!declared) {
      await res.body?.cancel();
      return problems.push(`${what}: status not declared`);
    }
    for (const name of Object.keys(declared.headers ?? {}))
      if (!res.headers.get(name)) problems.push(`${what}: lacks declared header ${name}`);
    const type = (res.headers.get('content-type') ?? '').split(';')[0] ?? '';
    if (type === 'text/event-stream' || init.method === 'HEAD' || !res.body) return res.body?.cancel();
    const media = Object.keys(declared.content ?? {});
    if (media.length === 0) {
      const text = await res.text();
      if (text !== '' && res.status !== 303) problems.push(`${what}: a body where none is declared`);
      return;
    }
    if (!media.some((m) => m.split(';')[0] === type || m === 'application/octet-stream'))
      problems.push(`${what}: content-type ${type}, declared ${media.join(', ')}`);
    const schema = declared.content?.[type]?.schema;
    if (type !== 'application/json') return void (await res.arrayBuffer());
    const body = await res.json();
    if (!schema) return problems.push(`${what}: JSON without a declared schema`);
    // An inline schema (the document itself) is checked by the validator; a $ref here.
    const name = schema.$ref?.split('/').pop() as SchemaName | undefined;
    if (!name) return;
    const parsed = (API_SCHEMAS[name] as z.ZodType).safeParse(body);
    if (!parsed.success) problems.push(`${what}: body is not a ${name}: ${parsed.error.message}`);
  };

  it('has an example for every operation it declares', () => {
    const exercised = new Set(ex.list.map((e) => e.op));
    expect(
      [...ops.keys()].filter((k) => !exercised.has(k)),
      'operations without an example',
    ).toEqual([]);
  });

  it('answers each operation only with a status it declares, a body its schema accepts and the headers it names', async () => {
    const problems: string[] = [];
    const credential = (op: Operation): Record<string, string> =>
      op.security?.some((s) => 'peer' in s) ? h.relay : { authorization: ex.admin };
    for (const e of ex.list) {
      const op = ops.get(e.op);
      if (!op) continue;
      const headers = { ...credential(op.op), ...((e.init?.headers as Record<string, string>) ?? {}) };
      await check(problems, e.op, e.url, { ...e.init, headers }, e.status);
    }
    expect(problems).toEqual([]);
  });

  it('answers each guarded operation asked with no credential 401, and declares it', async () => {
    const problems: string[] = [];
    for (const e of ex.list) {
      const op = ops.get(e.op);
      if (!op || op.op.security?.length === 0) continue;
      await check(problems, e.op, e.url, { ...e.init }, 401);
    }
    expect(problems).toEqual([]);
  });
});
