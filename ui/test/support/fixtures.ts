import {
  asRunId,
  encodeUlid,
  type HubEvent,
  HubEventSchema,
  type MatrixCell,
  MatrixCellSchema,
  type MatrixResponse,
  MatrixResponseSchema,
  type PlanCounts,
  type PlanRequest,
  PlanRequestSchema,
  type RunDetail,
  RunDetailSchema,
  type RunId,
  type RunListItem,
  RunListItemSchema,
  type SiteDetail,
  SiteDetailSchema,
  type SiteSummary,
  SiteSummarySchema,
  ZERO_COUNTS,
} from '@driftline/protocol';

/**
 * Test data for the dashboard, every piece built through the protocol's schemas (`parse`), so mocks,
 * the e2e stub server and the benchmark cannot drift from the hub's API.
 */

export const NOW = Date.parse('2025-06-01T12:00:00.000Z');
let base = NOW;
/** Moves the fixtures' "now" (the e2e test and the benchmark use the real time, for realistic ages). */
export function setFixtureNow(ms: number) {
  base = ms;
}
export const iso = (msAgo: number) => new Date(base - msAgo).toISOString();
export const MIN = 60_000;
export const HOUR = 60 * MIN;
export const DAY = 24 * HOUR;

/** A valid, deterministic run id for index `n`. */
export function runId(n: number): RunId {
  const random = new Uint8Array(10);
  new DataView(random.buffer).setUint32(6, n);
  return asRunId(encodeUlid(NOW - n, random));
}

export const counts = (c: Partial<PlanCounts>): PlanCounts => ({ ...ZERO_COUNTS, ...c });

export function cell(
  c: Partial<Omit<MatrixCell, 'site'>> & { site: string; environment: string; component: string },
): MatrixCell {
  return MatrixCellSchema.parse({
    status: 'clean',
    counts: counts({}),
    plannedAt: iso(20 * MIN),
    receivedAt: iso(10 * MIN),
    runId: runId(1),
    expectedIntervalS: 3600,
    stale: false,
    siteUnreachable: false,
    reason: null,
    ...c,
  });
}

export function site(s: Partial<Omit<SiteSummary, 'site'>> & { site: string }): SiteSummary {
  return SiteSummarySchema.parse({
    lastContactAt: iso(5 * MIN),
    expectedContactIntervalS: 900,
    unreachable: false,
    clockOffsetMs: 1200,
    cells: 0,
    statusCounts: {},
    ...s,
  });
}

/** The small, hand-made world most component tests use: one cell of every kind. */
export function smallWorld(): { cells: MatrixCell[]; sites: SiteSummary[] } {
  const cells = [
    cell({ site: 'ship-7', environment: 'prod', component: 'network', status: 'clean' }),
    cell({
      site: 'ship-7',
      environment: 'prod',
      component: 'compute',
      status: 'changes',
      counts: counts({ add: 2, change: 1, destroy: 3 }),
      plannedAt: iso(3 * HOUR),
      receivedAt: iso(3 * HOUR - 40 * MIN),
      runId: runId(2),
      expectedIntervalS: 6 * 3600,
    }),
    cell({
      site: 'ship-7',
      environment: 'staging',
      component: 'network',
      status: 'drift',
      counts: counts({ drift: 3 }),
      runId: runId(3),
    }),
    cell({
      site: 'ship-7',
      environment: 'staging',
      component: 'compute',
      status: 'failed',
      counts: null,
      reason: 'timeout',
      runId: runId(4),
    }),
    cell({
      site: 'lab',
      environment: 'prod',
      component: 'dns',
      status: 'locked',
      counts: null,
      reason: 'stuck-lock',
      plannedAt: iso(5 * HOUR),
      receivedAt: iso(5 * HOUR - MIN),
      stale: true,
    }),
    cell({
      site: 'lab',
      environment: 'staging',
      component: 'dns',
      status: 'redaction-failed',
      counts: null,
      reason: 'aws-key',
    }),
    cell({
      site: 'polar-1',
      environment: 'prod',
      component: 'network',
      status: 'changes',
      counts: counts({ add: 1 }),
      plannedAt: iso(3 * DAY + HOUR),
      receivedAt: iso(3 * DAY),
      siteUnreachable: true,
      stale: true,
    }),
    cell({
      site: 'polar-1',
      environment: 'staging',
      component: 'network',
      status: 'no-data',
      counts: null,
      plannedAt: null,
      receivedAt: null,
      runId: null,
      siteUnreachable: true,
    }),
  ];
  const sites = [
    site({ site: 'ship-7', cells: 4, statusCounts: { clean: 1, changes: 1, drift: 1, failed: 1 } }),
    site({ site: 'lab', cells: 2, statusCounts: { locked: 1, 'redaction-failed': 1 } }),
    site({
      site: 'polar-1',
      lastContactAt: iso(3 * DAY),
      unreachable: true,
      cells: 2,
      statusCounts: { changes: 1, 'no-data': 1 },
    }),
  ];
  return { cells, sites };
}

export function matrixResponse(cells: MatrixCell[], asOf = new Date(NOW).toISOString()): MatrixResponse {
  return MatrixResponseSchema.parse({ cells, asOf });
}

export function siteDetail(summary: SiteSummary, cells: MatrixCell[]): SiteDetail {
  return SiteDetailSchema.parse({
    ...summary,
    agents: [
      {
        agent: 'a1',
        publicKey: 'ed25519:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
        enrolledAt: iso(30 * DAY),
        revokedAt: null,
        version: '0.1.0',
        lastContactAt: summary.lastContactAt,
        queueDepth: 4,
        oldestUnsentAt: iso(2 * HOUR),
        clockOffsetMs: summary.clockOffsetMs,
        ...(summary.clockHeldAgents?.includes('a1')
          ? {
              clockHeld: {
                reason: 'contradicts-bounds',
                offsetMs: 86_400_000,
                uncertaintyMs: 0,
                since: iso(10 * MIN),
                lastAt: iso(10 * MIN),
                samples: 1,
                via: 'relay-2',
              },
            }
          : {}),
      },
    ],
    upstream: 'relay-dmz',
    contactWindows: ['0 * * * *'],
    matrix: cells.filter((c) => c.site === summary.site),
  });
}

export function runItem(
  r: Partial<Omit<RunListItem, 'site'>> & { n: number; site: string; environment: string; component: string },
): RunListItem {
  const { n, ...rest } = r;
  return RunListItemSchema.parse({
    runId: runId(n),
    agent: 'a1',
    status: 'clean',
    counts: counts({}),
    reason: null,
    plannedAt: iso(n * HOUR),
    receivedAt: iso(n * HOUR - 10 * MIN),
    unchanged: false,
    ...rest,
  });
}

export function runDetail(item: RunListItem, withResources = true): RunDetail {
  return RunDetailSchema.parse({
    ...item,
    detailAvailable: withResources,
    summary: {
      component: item.component,
      environment: item.environment,
      status: item.status,
      ...(item.reason
        ? {
            reason: item.reason,
            errorExcerpt: 'Error: timed out waiting for state lock\n  on main.tf line 3',
          }
        : {}),
      counts: item.counts ?? undefined,
      resources: withResources
        ? [
            {
              address: 'aws_security_group.web',
              type: 'aws_security_group',
              actions: ['update'],
              drift: true,
              changedAttributes: ['ingress[0].cidr_blocks', 'tags.owner'],
            },
            {
              address: 'aws_instance.app',
              type: 'aws_instance',
              actions: ['delete', 'create'],
              drift: false,
              reason: 'replace_because_cannot_update',
              changedAttributes: ['ami'],
            },
          ]
        : undefined,
      outputChanges: ['app_url'],
      terraformVersion: '1.9.5',
      git: { commit: 'abcdef1234567', branch: 'main' },
      exitCode: 2,
      startedAt: item.plannedAt,
      finishedAt: item.plannedAt,
    },
  });
}

export function planRequest(
  p: Partial<Omit<PlanRequest, 'site'>> & { site: string; environment: string; component: string },
): PlanRequest {
  return PlanRequestSchema.parse({
    requestId: 'pr-1',
    state: 'pending',
    requestedAt: new Date(NOW).toISOString(),
    expiresAt: new Date(NOW + DAY).toISOString(),
    deliveredAt: null,
    doneAt: null,
    runId: null,
    ...p,
  });
}

/** One SSE frame for an event, validated first. */
export function sseFrame(event: HubEvent, id: string): string {
  const e = HubEventSchema.parse(event);
  return `id: ${id}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;
}

/** A large matrix for the 50,000-cell checks: `sites × environments × components` cells. */
export function bigWorld(
  sites: number,
  environments: number,
  components: number,
): { cells: MatrixCell[]; sites: SiteSummary[] } {
  const statuses = ['clean', 'clean', 'clean', 'changes', 'drift', 'failed', 'locked', 'no-data'] as const;
  const cells: MatrixCell[] = [];
  const siteList: SiteSummary[] = [];
  for (let s = 0; s < sites; s++) {
    const siteId = `site-${String(s).padStart(4, '0')}`;
    const unreachable = s % 17 === 5;
    siteList.push(
      site({
        site: siteId,
        unreachable,
        lastContactAt: iso(unreachable ? 2 * DAY : 5 * MIN),
        cells: environments * components,
      }),
    );
    for (let e = 0; e < environments; e++) {
      for (let c = 0; c < components; c++) {
        const k = s * 7 + e * 3 + c;
        const status = statuses[k % statuses.length]!;
        const planned = (k % 13) * 20 * MIN;
        cells.push(
          MatrixCellSchema.parse({
            site: siteId,
            environment: `env-${e}`,
            component: `component-${String(c).padStart(3, '0')}`,
            status,
            counts:
              status === 'changes'
                ? counts({ add: k % 4, change: k % 3, destroy: k % 2 })
                : status === 'clean'
                  ? counts({})
                  : null,
            plannedAt: status === 'no-data' ? null : iso(planned + 10 * MIN),
            receivedAt: status === 'no-data' ? null : iso(planned + 5 * MIN),
            runId: status === 'no-data' ? null : runId(k),
            expectedIntervalS: 3600,
            stale: planned > 2 * HOUR,
            siteUnreachable: unreachable,
            reason: status === 'failed' ? 'timeout' : null,
          }),
        );
      }
    }
  }
  return { cells, sites: siteList };
}
