import type { Role } from '@driftline/protocol';
import { newSecret, sha256Hex } from '../src/adapters/http/credentials.js';
import { addUser } from '../src/core/users.js';
import type { HubStore } from '../src/ports/HubStore.js';

/** Adds a user as `hub user add` does and returns its `Authorization` header. */
export async function addTestUser(
  store: HubStore,
  name: string,
  roles: Role[],
): Promise<{ token: string; authorization: string }> {
  const token = newSecret();
  const r = await addUser(store, { name, roles, tokenSha256: sha256Hex(token) }, Date.now());
  if (!r.ok) throw new Error(r.error);
  return { token, authorization: `Bearer ${token}` };
}
