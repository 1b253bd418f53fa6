import { LOCK } from './locks.js';
import { UNCONFIRMED_APPROVAL } from './migrations.js';
import type { Stmt } from './PgDatabase.js';

const st = (name: string, text: string): Stmt => ({ name: `hub_r_${name}`, text });
const pst = (name: string, text: string): Stmt => ({ name: `hub_p_${name}`, text });
const CELL = 'site = $1 AND environment = $2 AND component = $3';

/** The reads of `PostgresHubStore`, one per port method (rows come back as the `row` json column). */
export const R = {
  getAgent: st('agent', 'SELECT row FROM agents WHERE site = $1 AND agent = $2'),
  agents: st('agents', 'SELECT row FROM agents ORDER BY site, agent'),
  // The ref gate's agents: their patterns only, not each whole row (decision 615).
  agentRefs: st(
    'agent_refs',
    `SELECT site, agent, row->'refs' AS refs FROM agents
     WHERE row->>'revokedAt' IS NULL AND json_typeof(row->'refs') = 'object' ORDER BY site, agent`,
  ),
  /** A row written before migration 6 has no brief: its row comes instead, briefed when read. */
  agentBriefs: st(
    'agent_briefs',
    'SELECT brief, CASE WHEN brief IS NULL THEN row END AS row FROM agents ORDER BY site, agent',
  ),
  agentsOf: st('agents_of', 'SELECT row FROM agents WHERE site = $1 ORDER BY site, agent'),
  getPeer: st('peer', 'SELECT row FROM peers WHERE token_sha256 = $1'),
  peers: st('peers', 'SELECT row FROM peers'),
  hasBundle: st('has_bundle', 'SELECT 1 AS one FROM bundles WHERE id = $1'),
  chunks: st('chunks', 'SELECT bytes FROM doc_chunks WHERE doc_id = $1 ORDER BY seq'),
  getCell: st('cell', `SELECT row FROM cells WHERE ${CELL}`),
  /** Default cells by (site, environment, component) arrays, one row per key in order (row null: none). */
  cellsByKey: st(
    'cells_by_key',
    `SELECT c.row FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS k(s, e, c, n)
     LEFT JOIN cells c ON c.site = k.s COLLATE "C" AND c.environment = k.e COLLATE "C" AND c.component = k.c COLLATE "C"
     ORDER BY k.n`,
  ),
  refCellsByKey: st(
    'ref_cells_by_key',
    `SELECT c.row FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS k(s, e, c, r, n)
     LEFT JOIN ref_cells c ON c.site = k.s COLLATE "C" AND c.environment = k.e COLLATE "C"
       AND c.component = k.c COLLATE "C" AND c.ref = k.r COLLATE "C"
     ORDER BY k.n`,
  ),
  cells: st('cells', 'SELECT row FROM cells ORDER BY site, environment, component'),
  cellsOf: st('cells_of', 'SELECT row FROM cells WHERE site = $1 ORDER BY site, environment, component'),
  cellsAt: st(
    'cells_at',
    `SELECT h.row FROM cell_history h JOIN (
       SELECT MAX(seq) AS seq FROM cell_history WHERE received_at <= $1 GROUP BY site, environment, component
     ) m ON h.seq = m.seq ORDER BY h.site, h.environment, h.component`,
  ),
  getRefCell: st('ref_cell', `SELECT row FROM ref_cells WHERE ${CELL} AND ref = $4`),
  refCells: st(
    'ref_cells',
    `SELECT row FROM ref_cells WHERE ($1::text IS NULL OR ref = $1) AND ($2::text IS NULL OR site = $2)
     AND ($3::text IS NULL OR status = $3) ORDER BY site, environment, component, ref LIMIT $4`,
  ),
  getRun: st('run', 'SELECT row FROM runs WHERE run_id = $1'),
  runsDefault: st(
    'runs_default',
    `SELECT row FROM runs WHERE ${CELL} AND at_ref IS NULL AND run_id < $4 AND ($6::text IS NULL OR status = $6) ORDER BY run_id DESC LIMIT $5`,
  ),
  runsOfRef: st(
    'runs_of_ref',
    `SELECT row FROM runs WHERE ${CELL} AND ref = $4 AND run_id < $5 AND ($7::text IS NULL OR status = $7) ORDER BY run_id DESC LIMIT $6`,
  ),
  runsAt: st(
    'runs_at',
    'SELECT row FROM runs WHERE ref = $1 AND git_commit = $2 ORDER BY run_id DESC LIMIT $3',
  ),
  getSite: st('site', 'SELECT row FROM sites WHERE site = $1'),
  sites: st('sites', 'SELECT row FROM sites ORDER BY site'),
  getBlob: st('blob', 'SELECT row FROM blobs WHERE sha256 = $1'),
  heldBlobs: st(
    'held_blobs',
    'SELECT DISTINCT a.sha256 FROM announcements a JOIN blobs b ON b.sha256 = a.sha256 WHERE a.doc_id = $1 ORDER BY a.sha256',
  ),
  docsAnnouncing: st(
    'docs_announcing',
    'SELECT DISTINCT doc_id FROM announcements WHERE sha256 = $1 ORDER BY doc_id',
  ),
  // one look at the (site, seq) index per site (decision 620)
  downlinkHeads: st(
    'downlink_heads',
    'SELECT s AS site, (SELECT max(seq) FROM downlink WHERE site = s) AS seq FROM unnest($1::text[]) AS s',
  ),
  downlink: st(
    'downlink',
    `SELECT seq, site, agent, kind, doc_id, request_id, replace_key, bytes, expires_at
     FROM downlink WHERE site = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
  ),
  /**
   * pending → delivered ($3), only if still pending (another hub's pull, or an answer, may have moved it);
   * a mark that a relay holds it ($3 'pending') only where none was marked (core/downlinkCustody.ts).
   */
  deliverRequest: st(
    'deliver_request',
    `UPDATE plan_requests SET state = $3::text, row = $2 WHERE request_id = $1 AND state = 'pending'
     AND ($3::text = 'delivered' OR (row->>'relayAt') IS NULL)`,
  ),
  deliverApproval: st(
    'deliver_approval',
    "UPDATE approvals SET row = $2 WHERE approval_id = $1 AND (row->>'deliveredAt') IS NULL",
  ),
  getRequest: st('request', 'SELECT row FROM plan_requests WHERE request_id = $1'),
  requests: st(
    'requests',
    `SELECT row FROM plan_requests WHERE ($1::text IS NULL OR site = $1)
     AND (NOT $2::boolean OR state IN ('pending', 'delivered')) ORDER BY request_id DESC LIMIT $3::int`,
  ),
  dueWebhooks: st(
    'due_webhooks',
    "SELECT row FROM webhooks WHERE state = 'pending' AND next_at <= $1 ORDER BY next_at, id LIMIT $2",
  ),
  getWebhook: st('webhook', 'SELECT row FROM webhooks WHERE id = $1'),
  getUser: st('user', 'SELECT row FROM users WHERE name = $1'),
  userByToken: st('user_by_token', 'SELECT row FROM users WHERE token_sha256 = $1'),
  users: st('users', 'SELECT row FROM users ORDER BY name'),
  getSession: st('session', 'SELECT row FROM sessions WHERE id_sha256 = $1'),
  audit: st('audit', 'SELECT id, row FROM audit WHERE id < $1 ORDER BY id DESC LIMIT $2'),
  approvers: st('approvers', 'SELECT row FROM approvers ORDER BY name'),
  getApproval: st('approval', 'SELECT row FROM approvals WHERE approval_id = $1'),
  approvalsOfRun: st(
    'approvals_of_run',
    'SELECT row FROM approvals WHERE site = $1 AND run_id = $2 ORDER BY approval_id LIMIT $3',
  ),
  approvalsOfSite: st(
    'approvals_of_site',
    'SELECT row FROM approvals WHERE site = $1 ORDER BY approval_id LIMIT $2',
  ),
  unconfirmedApprovals: st(
    'approvals_unconfirmed',
    `SELECT row FROM approvals WHERE ${UNCONFIRMED_APPROVAL} ORDER BY site, approval_id LIMIT $1`,
  ),
  applies: st('applies', 'SELECT row FROM applies WHERE site = $1 ORDER BY run_id'),
  appliesOf: st(
    'applies_of',
    'SELECT row FROM applies WHERE site = $1 AND run_id = ANY($2::text[]) ORDER BY run_id',
  ),
};

/** The per-document merge locks (`lockDocs`), on a session of their own. */
export const L = {
  /** Every document's lock, in key order, in one statement (a hash collision only serialises more). */
  lockDocs: st(
    'lock_docs',
    `SELECT count(pg_advisory_lock(${LOCK.document}, k))::int AS n
     FROM (SELECT DISTINCT hashtext(d) AS k FROM unnest($1::text[]) AS d ORDER BY k) s`,
  ),
  unlockAll: st('unlock_all', 'SELECT pg_advisory_unlock_all()'),
};

/** The statements of `prune` beside its bounded steps (`pruneSteps.ts`). */
export const P = {
  /** `@ref` cells not updated since `$1`, with every run of theirs: counts of each. */
  expireRefs: st(
    'expire_refs',
    `WITH c AS (DELETE FROM ref_cells WHERE received_at < $1 RETURNING site, environment, component, ref),
     r AS (DELETE FROM runs USING c WHERE runs.site = c.site AND runs.environment = c.environment
           AND runs.component = c.component AND runs.at_ref = c.ref RETURNING runs.run_id)
     SELECT (SELECT count(*) FROM c)::int AS cells, (SELECT count(*) FROM r)::int AS runs`,
  ),
  bundles: pst('bundles', 'DELETE FROM bundles WHERE received_at < $1'),
  sessions: pst('sessions', 'DELETE FROM sessions WHERE expires_at <= $1'),
  audit: pst('audit', 'DELETE FROM audit WHERE at < $1'),
};
