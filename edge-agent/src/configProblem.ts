/**
 * A start-up failure that is a configuration or credential problem (a missing or unreadable key, a hub
 * key pinned as an approver, a data directory another agent holds): `edge-agent run` exits 2 on it, as on
 * a bad config file, and 1 on anything else (issue 42).
 */
export class ConfigProblem extends Error {
  override readonly name = 'ConfigProblem';
}
