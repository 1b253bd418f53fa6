import { ACTIONS } from '@driftline/protocol';

/** What an enumerated field becomes when the plan holds a value its documentation does not list. */
export const UNKNOWN = 'unknown';

/**
 * `action_reason` values, from Terraform's JSON output format (internal/command/jsonplan/plan.go,
 * `ResourceInstance*` constants) and OpenTofu's additions (`delete_because_enabled_false`, the
 * `forgot_because_lifecycle_destroy_*` pair).
 */
export const ACTION_REASONS: ReadonlySet<string> = new Set([
  'replace_because_cannot_update',
  'replace_because_tainted',
  'replace_by_request',
  'replace_by_triggers',
  'delete_because_no_resource_config',
  'delete_because_wrong_repetition',
  'delete_because_count_index',
  'delete_because_each_key',
  'delete_because_no_module',
  'delete_because_no_move_target',
  'delete_because_enabled_false',
  'read_because_config_unknown',
  'read_because_dependency_pending',
  'read_because_check_nested',
  'forgot_because_lifecycle_destroy_in_state',
  'forgot_because_lifecycle_destroy_in_config',
]);

/** `change.actions` entries: `no-op`, `create`, `read`, `update`, `delete`, `forget`. */
export const CHANGE_ACTIONS: ReadonlySet<string> = new Set<string>(ACTIONS);

/** The value when documented, else `unknown`: nothing else of an enumerated field leaves the site. */
export function enumerated(allowed: ReadonlySet<string>, v: unknown): string {
  return typeof v === 'string' && allowed.has(v) ? v : UNKNOWN;
}
