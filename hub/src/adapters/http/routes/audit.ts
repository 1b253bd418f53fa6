import { API_PATHS, type AuditEntry, AuditQuerySchema } from '@driftline/protocol';
import type { AuditRow } from '../../../ports/HubStore.js';
import { err } from '../openapiShared.js';
import { route } from './route.js';

/** An audit row as `/api/audit` shows it. */
export function toAuditEntry(a: AuditRow): AuditEntry {
  return {
    id: a.id,
    at: new Date(a.at).toISOString(),
    actor: a.actor,
    via: a.via,
    action: a.action,
    target: a.target,
    outcome: a.outcome,
    ...(a.detail !== null ? { detail: a.detail } : {}),
    address: a.address,
  };
}

/** `GET /api/audit?limit=&before=`: the audit log, newest first; page with the last entry's `id`. */
export const auditRoutes = [
  route({
    method: 'GET',
    path: API_PATHS.audit,
    role: 'viewer',
    query: AuditQuerySchema,
    response: { status: 200, schema: 'AuditResponse', description: 'entries' },
    doc: { summary: 'The audit log, newest first', others: { '400': err('bad query') } },
    handler: async (_ctx, d, q) => {
      const rows = await d.store.listAudit({ limit: q.limit, ...(q.before ? { before: q.before } : {}) });
      return { entries: rows.map(toAuditEntry) };
    },
  }),
];
