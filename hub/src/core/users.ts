import type { AuditAction, Role } from '@driftline/protocol';
import type { AuditRow, PeopleStore, UserRow } from '../ports/HubStore.js';

/** Names the hub uses itself in the audit log: never a user's. */
const RESERVED = new Set(['cli', 'public', 'anonymous']);

/** A user name: what an SSO proxy sends (a login or an e-mail address) fits. */
export const USER_NAME = /^[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$/;

export function userNameProblem(name: string): string | null {
  if (!USER_NAME.test(name))
    return `'${name}' is not a user name (letters, digits and . _ @ + -, up to 128 characters)`;
  if (RESERVED.has(name.toLowerCase())) return `'${name}' is reserved for the hub's own audit entries`;
  return null;
}

/** An audit entry by the hub CLI (`actor: cli`, no client address). */
export function cliAudit(
  action: AuditAction,
  target: string,
  now: number,
  outcome: AuditRow['outcome'] = 'ok',
  detail: string | null = null,
): Omit<AuditRow, 'id'> {
  return { at: now, actor: 'cli', via: 'cli', action, target, outcome, detail, address: '' };
}

export type AddUserResult = { ok: true; user: UserRow; replaced: boolean } | { ok: false; error: string };

/**
 * Adds a user with `roles`: `tokenSha256` for token sign-in, or null for an SSO-only user. An active
 * user of the same name is refused (revoke it first); a revoked one is replaced, with a new token.
 */
export async function addUser(
  store: PeopleStore,
  input: { name: string; roles: Role[]; tokenSha256: string | null },
  now: number,
): Promise<AddUserResult> {
  const problem = userNameProblem(input.name);
  if (problem) return { ok: false, error: problem };
  const old = await store.getUser(input.name);
  if (old && old.revokedAt === null)
    return {
      ok: false,
      error: `user '${input.name}' exists; revoke it first (hub user revoke ${input.name})`,
    };
  const user: UserRow = { ...input, createdAt: now, revokedAt: null };
  const detail = `${input.roles.join(',')}${input.tokenSha256 ? '' : ' (sso)'}`;
  await store.commit({ users: [user], audit: [cliAudit('user.add', input.name, now, 'ok', detail)] });
  return { ok: true, user, replaced: old !== null };
}

/** Revokes a user: its token and sessions stop working at once; the audit log keeps its name. */
export async function revokeUser(
  store: PeopleStore,
  name: string,
  now: number,
): Promise<{ ok: true } | { ok: false; error: string }> {
  const user = await store.getUser(name);
  if (!user) return { ok: false, error: `no user '${name}' (see hub user list)` };
  if (user.revokedAt !== null) return { ok: false, error: `user '${name}' is already revoked` };
  await store.commit({ users: [{ ...user, revokedAt: now }], audit: [cliAudit('user.revoke', name, now)] });
  return { ok: true };
}
