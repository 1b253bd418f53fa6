import { type Role, RoleSchema } from '@driftline/protocol';

/**
 * Whether someone holding `roles` may act as `need` (S5 in docs/architecture.md#invariants). `admin` implies every role; every
 * role implies `viewer` (an operator reads what it asks about); otherwise a role is held or not.
 */
export function hasRole(roles: readonly Role[], need: Role): boolean {
  if (roles.includes('admin') || roles.includes(need)) return true;
  return need === 'viewer' && roles.length > 0;
}

/** Parses `viewer,operator` (the `--role` flag): the roles, or what is wrong with the text. */
export function parseRoles(text: string): { ok: true; roles: Role[] } | { ok: false; error: string } {
  const parts = [
    ...new Set(
      text
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ];
  if (parts.length === 0)
    return { ok: false, error: `name at least one role: ${RoleSchema.options.join(', ')}` };
  const roles: Role[] = [];
  for (const p of parts) {
    const r = RoleSchema.safeParse(p);
    if (!r.success)
      return { ok: false, error: `'${p}' is not a role (one of ${RoleSchema.options.join(', ')})` };
    roles.push(r.data);
  }
  return { ok: true, roles };
}
