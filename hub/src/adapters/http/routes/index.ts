import { approvalRoutes } from './approvals.js';
import { auditRoutes } from './audit.js';
import { documentRoutes } from './document.js';
import { driftRoutes } from './drift.js';
import { eventRoutes } from './events.js';
import { fleetRoutes } from './fleet.js';
import { matrixRoutes } from './matrix.js';
import { planRequestRoutes } from './planRequests.js';
import { publicationRoutes } from './publications.js';
import { refRoutes } from './refs.js';
import { relayRoutes } from './relays.js';
import type { Route } from './route.js';
import { runRoutes } from './runs.js';
import { sessionRoutes } from './session.js';
import { siteRoutes } from './sites.js';

/**
 * Every endpoint of `/api`, one file per resource. The router (`router.ts`), the auth guard's policy
 * (`../policy.ts`) and `/api/openapi.json` (`../openapi.ts`) are generated from this table: an endpoint
 * added to a resource's file is served, guarded and documented (docs/decisions/280-one-place-per-decision.md).
 */
export const API_ROUTES: readonly Route[] = [
  ...sessionRoutes,
  ...documentRoutes,
  ...matrixRoutes,
  ...siteRoutes,
  ...fleetRoutes,
  ...relayRoutes,
  ...runRoutes,
  ...planRequestRoutes,
  ...publicationRoutes,
  ...eventRoutes,
  ...refRoutes,
  ...auditRoutes,
  ...approvalRoutes,
  ...driftRoutes,
];
