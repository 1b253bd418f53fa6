import { agentBrief } from '../../core/fleet/agentBrief.js';
import { cellColumns } from '../../core/fleet/cellColumns.js';
import type { WriteSet } from '../../ports/HubStore.js';
import { LOCK, lockSql } from './locks.js';
import type { Step, Stmt } from './PgDatabase.js';

const st = (name: string, text: string): Stmt => ({ name: `hub_w_${name}`, text });
const upsert = (table: string, keys: string, cols: string[]) => {
  const all = [...keys.split(', '), ...cols];
  return `INSERT INTO ${table} (${all.join(', ')}) VALUES (${all.map((_, i) => `$${i + 1}`).join(', ')})
  ON CONFLICT (${keys}) DO UPDATE SET ${cols.map((c) => `${c} = EXCLUDED.${c}`).join(', ')}`;
};
const json = (v: unknown) => JSON.stringify(v);
const buf = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength);

/** Every write statement of `commit`, prepared once per connection. */
const W = {
  lockDownlink: st('lock_downlink', lockSql(LOCK.downlink)),
  bundle: st('bundle', 'INSERT INTO bundles (id, received_at) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING'),
  delChunks: st('del_chunks', 'DELETE FROM doc_chunks WHERE doc_id = $1'),
  chunk: st(
    'chunk',
    'INSERT INTO doc_chunks (doc_id, site, agent, epoch, bytes) VALUES ($1, $2, $3, $4, $5)',
  ),
  run: st(
    'run',
    `INSERT INTO runs (run_id, site, environment, component, status, received_at, ref, at_ref, git_commit, row)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (run_id) DO NOTHING`,
  ),
  refCell: st(
    'ref_cell',
    upsert('ref_cells', 'site, environment, component, ref', [
      'run_id',
      'status',
      'received_at',
      'planned_at',
      'row',
    ]),
  ),
  cell: st(
    'cell',
    `INSERT INTO cells (site, environment, component, run_id, row, status, kind, planned_at, stale_at, stale, ref, received_at, git_commit)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) ON CONFLICT (site, environment, component) DO UPDATE SET
     run_id = EXCLUDED.run_id, row = EXCLUDED.row, status = EXCLUDED.status, kind = EXCLUDED.kind,
     planned_at = EXCLUDED.planned_at, stale_at = EXCLUDED.stale_at, ref = EXCLUDED.ref, received_at = EXCLUDED.received_at,
     git_commit = EXCLUDED.git_commit,
     stale = CASE WHEN cells.stale_at IS NOT DISTINCT FROM EXCLUDED.stale_at
       THEN GREATEST(cells.stale, EXCLUDED.stale) ELSE EXCLUDED.stale END`,
  ),
  history: st(
    'history',
    'INSERT INTO cell_history (site, environment, component, status, received_at, row) VALUES ($1, $2, $3, $4, $5, $6)',
  ),
  agent: st('agent', upsert('agents', 'site, agent', ['row', 'brief'])),
  site: st('site', upsert('sites', 'site', ['row'])),
  announcement: st(
    'announcement',
    'INSERT INTO announcements (sha256, doc_id, run_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
  ),
  delAck: st('del_ack', "DELETE FROM downlink WHERE kind = 'ack' AND doc_id = $1"),
  delReplaced: st('del_replaced', 'DELETE FROM downlink WHERE replace_key = $1'),
  downlink: st(
    'downlink',
    `INSERT INTO downlink (site, agent, kind, doc_id, request_id, replace_key, bytes, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
  ),
  request: st('request', upsert('plan_requests', 'request_id', ['site', 'state', 'row'])),
  webhook: st(
    'webhook',
    'INSERT INTO webhooks (id, state, next_at, row) VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO NOTHING',
  ),
  webhookUpdate: st('webhook_update', upsert('webhooks', 'id', ['state', 'next_at', 'row'])),
  blob: st('blob', upsert('blobs', 'sha256', ['row'])),
  peer: st('peer', upsert('peers', 'token_sha256', ['row'])),
  peerStatus: st(
    'peer_status',
    "UPDATE peers SET row = (row::jsonb || jsonb_build_object('status', $1::jsonb, 'statusAt', $2::bigint))::json WHERE token_sha256 = $3",
  ),
  peerUse: st(
    'peer_use',
    "UPDATE peers SET row = jsonb_set(row::jsonb, '{lastUsedAt}', to_jsonb($1::bigint))::json WHERE token_sha256 = $2",
  ),
  user: st('user', upsert('users', 'name', ['token_sha256', 'row'])),
  session: st('session', upsert('sessions', 'id_sha256', ['user_name', 'expires_at', 'row'])),
  delSession: st('del_session', 'DELETE FROM sessions WHERE id_sha256 = $1'),
  audit: st('audit', 'INSERT INTO audit (at, row) VALUES ($1, $2)'),
  approver: st('approver', upsert('approvers', 'name', ['row'])),
  delApprover: st('del_approver', 'DELETE FROM approvers WHERE name = $1'),
  approval: st('approval', upsert('approvals', 'approval_id', ['site', 'run_id', 'row'])),
  apply: st('apply', upsert('applies', 'site, run_id', ['row'])),
};

/**
 * The statements of one `commit`, in the order the SQLite store applies them, for one transaction.
 * Appends to a site's downlink first take that site's advisory lock (all of them, sorted, before any
 * other write, so two commits never wait on each other in a cycle): a downlink row's `seq` then
 * follows commit order, and a reader paging by `seq` never skips a row that commits late.
 */
export function writeSteps(w: WriteSet): Step[] {
  const out: Step[] = [];
  const add = (s: Stmt, ...values: unknown[]) => out.push([s, values]);
  for (const site of [...new Set((w.downlink ?? []).map((d) => d.site))].sort()) add(W.lockDownlink, site);
  for (const b of w.bundles ?? []) add(W.bundle, b.id, b.receivedAt);
  for (const c of w.docChunks ?? []) {
    if (c.whole) add(W.delChunks, c.docId);
    add(W.chunk, c.docId, c.site, c.agent, c.epoch, buf(c.bytes));
  }
  for (const r of w.runs ?? [])
    add(
      W.run,
      r.runId,
      r.site,
      r.environment,
      r.component,
      r.status,
      r.receivedAt,
      r.ref ?? null,
      r.atRef ?? null,
      r.commit ?? null,
      json(r),
    );
  for (const c of w.cells ?? []) {
    if (c.atRef)
      add(
        W.refCell,
        c.site,
        c.environment,
        c.component,
        c.atRef,
        c.runId,
        c.status,
        c.receivedAt,
        c.plannedAt,
        json(c),
      );
    else {
      const k = cellColumns(c);
      add(
        W.cell,
        c.site,
        c.environment,
        c.component,
        c.runId,
        json(c),
        k.status,
        k.kind,
        k.plannedAt,
        k.staleAt,
        k.stale,
        k.ref,
        k.receivedAt,
        k.commit,
      );
    }
  }
  for (const h of w.history ?? [])
    add(W.history, h.site, h.environment, h.component, h.status, h.receivedAt, json(h));
  for (const a of w.agents ?? []) add(W.agent, a.site, a.agent, json(a), json(agentBrief(a)));
  for (const x of w.sites ?? []) add(W.site, x.site, json(x));
  for (const a of w.announcements ?? []) add(W.announcement, a.sha256, a.docId, a.runId);
  for (const d of w.downlink ?? []) {
    if (d.kind === 'ack' && d.docId) add(W.delAck, d.docId);
    if (d.replaceKey) add(W.delReplaced, d.replaceKey);
    const { site, agent, kind, docId, requestId } = d;
    add(W.downlink, site, agent, kind, docId, requestId, d.replaceKey ?? null, buf(d.bytes), d.expiresAt);
  }
  for (const p of w.planRequests ?? []) add(W.request, p.requestId, p.site, p.state, json(p));
  for (const h of w.webhooks ?? []) add(W.webhook, h.id, h.state, h.nextAt, json(h));
  for (const h of w.webhookUpdates ?? []) add(W.webhookUpdate, h.id, h.state, h.nextAt, json(h));
  for (const b of w.blobs ?? []) add(W.blob, b.sha256, json(b));
  for (const p of w.peers ?? []) add(W.peer, p.tokenSha256, json(p));
  for (const u of w.peerUses ?? []) add(W.peerUse, u.at, u.tokenSha256);
  for (const x of w.peerStatuses ?? []) add(W.peerStatus, json(x.status), x.at, x.tokenSha256);
  for (const u of w.users ?? []) add(W.user, u.name, u.tokenSha256, json(u));
  for (const x of w.sessions ?? []) add(W.session, x.idSha256, x.user, x.expiresAt, json(x));
  for (const id of w.sessionDeletes ?? []) add(W.delSession, id);
  for (const a of w.audit ?? []) add(W.audit, a.at, json(a));
  for (const a of w.approvers ?? []) add(W.approver, a.name, json(a));
  for (const n of w.approverDeletes ?? []) add(W.delApprover, n);
  for (const a of w.approvals ?? []) add(W.approval, a.approvalId, a.site, a.runId, json(a));
  for (const a of w.applies ?? []) add(W.apply, a.site, a.runId, json(a));
  return out;
}
