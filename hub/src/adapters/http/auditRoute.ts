import { type AuditEntry, AuditResponseSchema } from '@driftline/protocol';
import Router from '@koa/router';
import type { AuditRow, HubStore } from '../../ports/HubStore.js';
import { parseOr400 } from './parse.js';
import { AuditQuery } from './queries.js';

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
export function auditRoute(store: HubStore): Router {
  const r = new Router();
  r.get('/api/audit', async (ctx) => {
    const q = parseOr400(AuditQuery, ctx.query, 'query parameter');
    const rows = await store.listAudit({ limit: q.limit, ...(q.before ? { before: q.before } : {}) });
    ctx.body = AuditResponseSchema.parse({ entries: rows.map(toAuditEntry) });
  });
  return r;
}
