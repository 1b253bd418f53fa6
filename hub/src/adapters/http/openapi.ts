import {
  AuditResponseSchema,
  BundleDetailSchema,
  BundlesResponseSchema,
  ErrorBodySchema,
  HubEventSchema,
  MatrixResponseSchema,
  PlanRequestCreateSchema,
  PlanRequestSchema,
  RunDetailSchema,
  RunsResponseSchema,
  SessionCreateSchema,
  SessionSchema,
  SiteDetailSchema,
  SitesResponseSchema,
} from '@driftline/protocol';
import { z } from 'zod';
import { authPaths, SECURITY_SCHEMES, withRoles } from './openapiAuth.js';

const schemas = {
  MatrixResponse: MatrixResponseSchema,
  SitesResponse: SitesResponseSchema,
  SiteDetail: SiteDetailSchema,
  RunsResponse: RunsResponseSchema,
  RunDetail: RunDetailSchema,
  PlanRequestCreate: PlanRequestCreateSchema,
  PlanRequest: PlanRequestSchema,
  HubEvent: HubEventSchema,
  Session: SessionSchema,
  SessionCreate: SessionCreateSchema,
  AuditResponse: AuditResponseSchema,
  BundleDetail: BundleDetailSchema,
  BundlesResponse: BundlesResponseSchema,
  Error: ErrorBodySchema,
};

const ref = (name: keyof typeof schemas) => ({ $ref: `#/components/schemas/${name}` });
const json = (name: keyof typeof schemas, description: string) => ({
  description,
  content: { 'application/json': { schema: ref(name) } },
});
const q = (name: string, description: string, required = false) => ({
  name,
  in: 'query',
  required,
  schema: { type: 'string' },
  description,
});
const p = (name: string) => ({ name, in: 'path', required: true, schema: { type: 'string' } });
const errors = { '400': json('Error', 'bad query or body'), '404': json('Error', 'not found') };

/**
 * OpenAPI 3.1 description of `/api/…`, its schemas generated from protocol's zod schemas. Every operation
 * names the role it needs (`x-driftline-role`) and the credentials it takes (bearer token or cookie).
 */
export function openApiDocument(version: string): object {
  return {
    openapi: '3.1.0',
    info: { title: 'Driftline hub API', version },
    security: [{ bearer: [] }, { cookie: [] }],
    paths: withRoles({ ...basePaths(), ...authPaths(ref, json) }, json),
    components: {
      securitySchemes: SECURITY_SCHEMES,
      schemas: Object.fromEntries(
        Object.entries(schemas).map(([k, s]) => [
          k,
          z.toJSONSchema(s, { unrepresentable: 'any', io: 'output' }),
        ]),
      ),
    },
  };
}

function basePaths(): Record<string, Record<string, object>> {
  return {
    '/api/matrix': {
      get: {
        summary: 'The matrix of cells (site × environment × component), now or as known at `at`',
        parameters: [
          q('site', 'only this site'),
          q('environment', 'only this environment'),
          q('component', 'only this component'),
          q('status', 'only cells with this status'),
          q('stale', 'true or false'),
          q('at', 'ISO 8601 time: the matrix as the hub knew it then'),
        ],
        responses: { '200': json('MatrixResponse', 'cells'), ...errors },
      },
    },
    '/api/sites': { get: { summary: 'Every site', responses: { '200': json('SitesResponse', 'sites') } } },
    '/api/sites/{site}': {
      get: {
        summary: 'One site with its agents and cells',
        parameters: [p('site')],
        responses: { '200': json('SiteDetail', 'site'), ...errors },
      },
    },
    '/api/cells/{site}/{environment}/{component}/runs': {
      get: {
        summary: 'Runs of one cell, newest first',
        parameters: [
          p('site'),
          p('environment'),
          p('component'),
          q('before', 'RunId to page from'),
          q('limit', '1-500'),
        ],
        responses: { '200': json('RunsResponse', 'runs'), ...errors },
      },
    },
    '/api/runs/{runId}': {
      get: {
        summary: 'One run, with resources once its detail blob has arrived',
        parameters: [p('runId')],
        responses: { '200': json('RunDetail', 'run'), ...errors },
      },
    },
    '/api/plan-requests': {
      get: {
        summary: 'Plan requests, newest first',
        parameters: [q('site', 'only this site')],
        responses: { '200': { description: 'requests' } },
      },
      post: {
        summary: "Ask a site's agent to plan one cell it already plans",
        requestBody: {
          required: true,
          content: { 'application/json': { schema: ref('PlanRequestCreate') } },
        },
        responses: {
          '201': json('PlanRequest', 'created'),
          ...errors,
          '422': json('Error', 'cell not planned by that site'),
        },
      },
    },
    '/api/plan-requests/{requestId}': {
      get: {
        summary: 'One plan request',
        parameters: [p('requestId')],
        responses: { '200': json('PlanRequest', 'request'), ...errors },
      },
    },
    '/api/events': {
      get: {
        summary:
          'Server-Sent Events: cell-updated, site-updated, run-added, plan-request-updated; reconnect with Last-Event-ID',
        responses: {
          '200': {
            description: 'text/event-stream; each `data` is a HubEvent',
            content: { 'text/event-stream': { schema: ref('HubEvent') } },
          },
        },
      },
    },
  };
}
