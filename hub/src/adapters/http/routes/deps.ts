import type { AuditAction, PlanRequest, Role } from '@driftline/protocol';
import type { Context } from 'koa';
import type { Logger } from 'pino';
import type { ApiConfig } from '../../../config.js';
import type { Approvals } from '../../../core/Approvals.js';
import type { Drift } from '../../../core/drift/Drift.js';
import type { EventLog } from '../../../core/EventLog.js';
import type { PlanRequests } from '../../../core/PlanRequests.js';
import type { PublicationResends } from '../../../core/publish/PublicationResends.js';
import type { Queries } from '../../../core/Queries.js';
import type { BlobFiles } from '../../../ports/BlobFiles.js';
import type { Clock } from '../../../ports/Clock.js';
import type { AuditRow, HubStore } from '../../../ports/HubStore.js';
import type { PublicationStore } from '../../../ports/PublicationStore.js';
import type { Publisher } from '../../publish/Publisher.js';

/** What sign-in needs of the people's side's authentication (`HubAuth` has it). */
export interface SignInAuth {
  tokenUser(ctx: Context, token: string): Promise<{ user: string; roles: Role[] }>;
  record(
    ctx: Context,
    action: AuditAction,
    outcome: AuditRow['outcome'],
    detail?: string | null,
    target?: string,
  ): Promise<void>;
  secure(ctx: Context): boolean;
}

/** What the `/api` handlers use, built once by the hub (`createHub`) and passed to every handler. */
export interface ApiDeps {
  store: HubStore;
  queries: Queries;
  planRequests: PlanRequests;
  events: EventLog;
  blobs: BlobFiles;
  clock: Clock;
  version: string;
  publications: PublicationStore;
  publisher: Publisher;
  /** Largest publication body, bytes (`api.maxUploadBytes`). */
  maxUploadBytes: number;
  approvals: Approvals;
  /** Publications the sites' agents have not confirmed (decision 300); unset: not judged. */
  publicationResends?: PublicationResends;
  onPlanRequest?: (r: PlanRequest) => void;
  /** Where a detail blob that would not inflate is reported. */
  logger?: Pick<Logger, 'warn'>;
  /** Cap of a detail blob's inflated size, bytes; default `MAX_DETAIL_BYTES` (routes/runs.ts). */
  maxDetailBytes?: number;
  /** Drift episodes, groups and waivers (decision 421); unset: `/api/drift` and `/api/waivers` answer 404. */
  drift?: Drift;
}

/** `ApiDeps` with what the people's side adds when it mounts the routes. */
export interface RouteDeps extends ApiDeps {
  auth: SignInAuth;
  config: ApiConfig;
  csrfKey: Uint8Array;
  /** This hub's OpenAPI document (`GET /api/openapi.json`). */
  openApi(): object;
}
