/**
 * Advisory lock namespaces: the first key of `pg_advisory_xact_lock(namespace, hashtext(key))`. One
 * table so two features never pick the same number. Transaction-scoped where possible; the three that a
 * session holds (documents, leader, drift) go with the session, whatever happens to the process holding them.
 */
export const LOCK = {
  /** Schema migrations (key 0): two hubs starting at once apply them one after the other. */
  migrations: 1,
  /** Appends to a site's downlink (key: the site), so its `seq` order is its commit order. */
  downlink: 2,
  /** A publication's name and kind (key: `name\0kind`): supersession decided by one publisher at a time. */
  publication: 3,
  /** One merge of a document at a time across hubs (key: the document id); session-scoped (`lockDocs`). */
  document: 4,
  /** The one hub that sweeps and sends webhooks (key 0); session-scoped, held while it leads (PgLeader). */
  leader: 5,
  /** Appends to the shared event table (key 0), so event ids follow commit order (PgEvents). */
  events: 6,
  /** Advancing drift episodes (key 0): one hub's batch at a time reads and writes them; session-scoped. */
  drift: 7,
} as const;

/** SQL taking the lock of `namespace` for the text key in parameter `$n` until the transaction ends. */
export const lockSql = (namespace: number, n = 1) =>
  `SELECT pg_advisory_xact_lock(${namespace}, hashtext($${n}))`;
