import { MatrixQuerySchema } from '@driftline/protocol';
import { approvalPaths } from './openapiApprovals.js';
import { authPaths, SECURITY_SCHEMES, withRoles } from './openapiAuth.js';
import { hopPaths } from './openapiHop.js';
import { refPaths } from './openapiRefs.js';
import { componentSchemas, err, header, json, pathParam, queryParams, raw, ref } from './openapiShared.js';
import { EventsQuery, RunsQuery, SiteFilterQuery } from './queries.js';

const errors = { '400': err('bad query or body'), '404': err('not found') };
const notModified = { '304': { description: 'not modified: the ETag sent in If-None-Match is current' } };

/**
 * OpenAPI 3.1 description of everything the hub serves: `/api/…`, sign-in, the dashboard's files, and the
 * hop API (`/v1/…`, `/metrics`). Schemas are generated from protocol's zod schemas and query parameters
 * from the zod schemas the routes parse with. Every operation names who may call it
 * (`x-driftline-role`) and the credentials it takes.
 */
export function openApiDocument(version: string): object {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Driftline hub API',
      version,
      description:
        'Every GET also answers HEAD with the same status and headers (Content-Length, ETag) and no body. ' +
        'JSON reads carry a strong ETag; If-None-Match with it answers 304. No route replaces a resource, ' +
        'so none evaluates If-Match. A 401 carries WWW-Authenticate: Bearer realm="driftline"; a 429 or 503 ' +
        'carries Retry-After. With listen.hop and listen.api apart, /v1 (but /v1/health) is served on the ' +
        'hop listener only, and /api, the dashboard and /metrics on the api listener only.',
    },
    tags: [
      { name: 'api', description: "the people's side: dashboard, operators, CI" },
      { name: 'hop', description: 'the hop API relays and directly connected agents use' },
    ],
    security: [{ bearer: [] }, { cookie: [] }],
    paths: withRoles({ ...apiPaths(), ...refPaths(), ...approvalPaths(), ...authPaths(), ...hopPaths() }),
    components: { securitySchemes: SECURITY_SCHEMES, schemas: componentSchemas() },
  };
}

function apiPaths(): Record<string, Record<string, object>> {
  return {
    '/api/openapi.json': {
      get: {
        summary: 'This document',
        responses: {
          '200': raw('application/json', 'the OpenAPI document', { type: 'object' }),
          ...notModified,
        },
      },
    },
    '/api/matrix': {
      get: {
        summary: 'The matrix of cells (site × environment × component), now or as known at `at`',
        parameters: queryParams(MatrixQuerySchema, {
          site: 'only this site',
          environment: 'only this environment',
          component: 'only this component',
          status: 'only cells with this status',
          stale: 'only stale (true) or fresh (false) cells',
          at: 'ISO 8601 time: the matrix as the hub knew it then',
          ref: "plans of this ref (pr/42): its cells and no-data for cells that may plan it; default each component's default ref; not with at",
        }),
        responses: { '200': json('MatrixResponse', 'cells'), ...notModified, '400': err('bad query') },
      },
    },
    '/api/sites': {
      get: { summary: 'Every site', responses: { '200': json('SitesResponse', 'sites'), ...notModified } },
    },
    '/api/fleet': {
      get: {
        summary:
          'The fleet at a glance: counts by status, stale and unreachable per site and environment, link facts, worst cells first',
        responses: { '200': json('FleetResponse', 'fleet summary'), ...notModified },
      },
    },
    '/api/relays': {
      get: {
        summary:
          'Each relay: the sites it acts for, its last token use, the status it last reported, and what is wrong there with the command that fixes it',
        responses: { '200': json('RelaysResponse', 'relays'), ...notModified },
      },
    },
    '/api/sites/{site}': {
      get: {
        summary: 'One site with its agents and cells',
        parameters: [pathParam('site')],
        responses: { '200': json('SiteDetail', 'site'), ...notModified, '404': err('no such site') },
      },
    },
    '/api/cells/{site}/{environment}/{component}/runs': {
      get: {
        summary: 'Runs of one cell, newest first',
        parameters: [
          pathParam('site'),
          pathParam('environment'),
          pathParam('component'),
          ...queryParams(RunsQuery),
        ],
        responses: { '200': json('RunsResponse', 'runs'), ...notModified, '400': err('bad query') },
      },
    },
    '/api/runs/{runId}': {
      get: {
        summary: 'One run, with resources once its detail blob has arrived',
        parameters: [pathParam('runId')],
        responses: { '200': json('RunDetail', 'run'), ...notModified, '404': err('no such run') },
      },
    },
    '/api/plan-requests': {
      get: {
        summary: 'Plan requests',
        parameters: queryParams(SiteFilterQuery),
        responses: {
          '200': json('PlanRequestsResponse', 'requests'),
          ...notModified,
          '400': err('bad query'),
        },
      },
      post: {
        summary:
          "Ask a site's agent to plan one cell it already plans, optionally a ref (and commit) its ref patterns allow",
        requestBody: {
          required: true,
          content: { 'application/json': { schema: ref('PlanRequestCreate') } },
        },
        responses: {
          '201': json('PlanRequest', 'created'),
          ...errors,
          '413': err('body over 64 KiB'),
          '422': err('cell not planned by that site, a bad ref or commit, or a ref it may not plan'),
        },
      },
    },
    '/api/plan-requests/{requestId}': {
      get: {
        summary: 'One plan request',
        parameters: [pathParam('requestId')],
        responses: { '200': json('PlanRequest', 'request'), ...notModified, '404': err('no such request') },
      },
    },
    '/api/events': {
      get: {
        summary:
          'Server-Sent Events: cell-updated, site-updated, run-added, plan-request-updated, and reset. Ids are ' +
          '`<epoch>-<seq>`, the epoch naming this run of the hub. Reconnect with Last-Event-ID to get what ' +
          'was missed; when that cannot be done (the hub restarted, the client fell behind, or the id is not ' +
          'one this hub gave) the stream starts with `reset`, and the client must re-read everything.',
        parameters: [header('Last-Event-ID', 'the id of the last event seen'), ...queryParams(EventsQuery)],
        responses: {
          '200': raw('text/event-stream', 'each `data` is a HubEvent', ref('HubEvent')),
          '400': err('bad query'),
        },
      },
    },
  };
}
