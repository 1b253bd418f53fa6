import {
  ApprovalJourneySchema,
  ApprovalSchema,
  ApprovalsResponseSchema,
  ApproversResponseSchema,
  AuditResponseSchema,
  DownlinkWatchAnswerSchema,
  DownlinkWatchSchema,
  DriftEpisodeSchema,
  DriftGroupsResponseSchema,
  DriftResponseSchema,
  ErrorBodySchema,
  FleetResponseSchema,
  HealthSchema,
  HubEventSchema,
  LegacyBundleDetailSchema,
  LegacyBundlesResponseSchema,
  MatrixResponseSchema,
  NeedsResponseSchema,
  PeerInfoSchema,
  PlanRequestCreateSchema,
  PlanRequestSchema,
  PlanRequestsResponseSchema,
  PublicationDetailSchema,
  PublicationsResponseSchema,
  ReceiptsResponseSchema,
  RefStatusResponseSchema,
  RefsResponseSchema,
  RelayStatusSchema,
  RelaysResponseSchema,
  RunDetailSchema,
  RunsResponseSchema,
  SessionCreateSchema,
  SessionSchema,
  SiteDetailSchema,
  SitesResponseSchema,
  SourcesResponseSchema,
  WaiverCreateSchema,
  WaiverSchema,
  WaiversResponseSchema,
  wire2,
} from '@driftline/protocol';
import { z } from 'zod';

/**
 * Every schema `/api/openapi.json` names, by component name. The document's JSON Schemas are generated
 * from these zod schemas; tests check answers against the zod schema a response's `$ref` names.
 */
export const API_SCHEMAS = {
  MatrixResponse: MatrixResponseSchema,
  SitesResponse: SitesResponseSchema,
  FleetResponse: FleetResponseSchema,
  SiteDetail: SiteDetailSchema,
  RunsResponse: RunsResponseSchema,
  RunDetail: RunDetailSchema,
  PlanRequestCreate: PlanRequestCreateSchema,
  PlanRequest: PlanRequestSchema,
  PlanRequestsResponse: PlanRequestsResponseSchema,
  HubEvent: HubEventSchema,
  Session: SessionSchema,
  SessionCreate: SessionCreateSchema,
  AuditResponse: AuditResponseSchema,
  PublicationDetail: PublicationDetailSchema,
  PublicationsResponse: PublicationsResponseSchema,
  LegacyBundleDetail: LegacyBundleDetailSchema,
  LegacyBundlesResponse: LegacyBundlesResponseSchema,
  ReceiptsResponse: ReceiptsResponseSchema,
  PeerInfo: PeerInfoSchema,
  DownlinkWatch: DownlinkWatchSchema,
  DownlinkWatchAnswer: DownlinkWatchAnswerSchema,
  Wire2Registration: wire2.Wire2RegistrationSchema,
  Wire2Info: wire2.Wire2InfoSchema,
  RelayStatus: RelayStatusSchema,
  RelaysResponse: RelaysResponseSchema,
  RefsResponse: RefsResponseSchema,
  RefStatusResponse: RefStatusResponseSchema,
  NeedsResponse: NeedsResponseSchema,
  SourcesResponse: SourcesResponseSchema,
  Approval: ApprovalSchema,
  ApprovalJourney: ApprovalJourneySchema,
  ApprovalsResponse: ApprovalsResponseSchema,
  ApproversResponse: ApproversResponseSchema,
  Health: HealthSchema.extend({ detail: z.string().optional() }),
  Error: ErrorBodySchema,
  DriftResponse: DriftResponseSchema,
  DriftEpisode: DriftEpisodeSchema,
  DriftGroupsResponse: DriftGroupsResponseSchema,
  Waiver: WaiverSchema,
  WaiverCreate: WaiverCreateSchema,
  WaiversResponse: WaiversResponseSchema,
} as const;

export type SchemaName = keyof typeof API_SCHEMAS;

/** A reference to a component schema. */
export const ref = (name: SchemaName) => ({ $ref: `#/components/schemas/${name}` });

/** A response whose body is JSON of a component schema. */
export const json = (name: SchemaName, description: string) => ({
  description,
  content: { 'application/json': { schema: ref(name) } },
});

/** An error response (`{ error: { code, message } }`). */
export const err = (description: string) => json('Error', description);

/** A response whose body is `mediaType` bytes (or text). */
export const raw = (mediaType: string, description: string, schema: object = { type: 'string' }) => ({
  description,
  content: { [mediaType]: { schema } },
});

/** A required path parameter. */
export const pathParam = (name: string, description?: string, schema: object = { type: 'string' }) => ({
  name,
  in: 'path',
  required: true,
  schema,
  ...(description ? { description } : {}),
});

/** A header parameter. */
export const header = (name: string, description: string) => ({
  name,
  in: 'header',
  required: false,
  schema: { type: 'string' },
  description,
});

/**
 * The query parameters of a route, from the zod schema the route parses its query with: name, whether
 * required, JSON Schema of the accepted text and the field's `.describe()` text.
 */
export function queryParams(schema: z.ZodObject, descriptions: Record<string, string> = {}): object[] {
  const js = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as {
    properties?: Record<string, { description?: string }>;
    required?: string[];
  };
  return Object.entries(js.properties ?? {}).map(([name, s]) => {
    const { description, ...rest } = s;
    const text = descriptions[name] ?? description;
    return {
      name,
      in: 'query',
      required: js.required?.includes(name) ?? false,
      schema: rest,
      ...(text ? { description: text } : {}),
    };
  });
}

/** The component schemas, as JSON Schema. */
export function componentSchemas(): Record<string, object> {
  return Object.fromEntries(
    Object.entries(API_SCHEMAS).map(([k, s]) => [
      k,
      z.toJSONSchema(s as z.ZodType, { unrepresentable: 'any', io: 'output' }),
    ]),
  );
}

/** A 401: always with its challenge (RFC 9110 §11.6.1). */
export const unauthorized = (description: string) => ({
  ...err(description),
  headers: {
    'WWW-Authenticate': {
      description: 'the scheme to use',
      schema: { type: 'string', const: 'Bearer realm="driftline"' },
    },
  },
});

/** A 429 or 503: always with when to retry (RFC 9110 §10.2.3). */
export const retryLater = (description: string) => ({
  ...err(description),
  headers: { 'Retry-After': { description: 'seconds to wait', schema: { type: 'integer', minimum: 1 } } },
});
