/**
 * Advisory lock namespaces: the first key of `pg_advisory_xact_lock(namespace, hashtext(key))`. One
 * table so two features never pick the same number. Transaction-scoped locks only: they go with the
 * transaction, whatever happens to the process holding them.
 */
export const LOCK = {
  /** Schema migrations (key 0): two hubs starting at once apply them one after the other. */
  migrations: 1,
  /** Appends to a site's downlink (key: the site), so its `seq` order is its commit order. */
  downlink: 2,
  /** A publication's name and kind (key: `name\0kind`): supersession decided by one publisher at a time. */
  publication: 3,
  /** Reserved: one merge of a document at a time across hubs (key: the document id). */
  document: 4,
  /** Reserved: the one hub that sweeps and sends webhooks. */
  leader: 5,
} as const;

/** SQL taking the lock of `namespace` for the text key in parameter `$n` until the transaction ends. */
export const lockSql = (namespace: number, n = 1) =>
  `SELECT pg_advisory_xact_lock(${namespace}, hashtext($${n}))`;
