import { expect, it } from 'vitest';
import type { HubStore, UserRow } from '../src/ports/HubStore.js';

type WithStore = (fn: (s: HubStore) => Promise<void>) => () => Promise<void>;

/** The users, sessions and audit part of the HubStore contract (run inside `runHubStoreContract`). */
export function runAuthStoreContract(withStore: WithStore) {
  const user = (name: string, tokenSha256: string | null): UserRow => ({
    name,
    roles: ['operator'],
    tokenSha256,
    createdAt: 1,
    revokedAt: null,
  });

  it(
    'keeps users by name, finds them by token hash, and keeps a revocation',
    withStore(async (s) => {
      await s.commit({ users: [user('ada', 'a'.repeat(64)), user('sso-bob', null)] });
      expect((await s.userByToken('a'.repeat(64)))?.name).toBe('ada');
      expect(await s.userByToken('b'.repeat(64))).toBeNull();
      expect((await s.getUser('sso-bob'))?.tokenSha256).toBeNull();
      await s.commit({ users: [{ ...user('ada', 'a'.repeat(64)), revokedAt: 7 }] });
      expect((await s.userByToken('a'.repeat(64)))?.revokedAt).toBe(7);
      await s.commit({ users: [{ ...user('ada', 'c'.repeat(64)), roles: ['admin'] }] });
      expect(await s.userByToken('a'.repeat(64))).toBeNull();
      expect(await s.getUser('ada')).toMatchObject({ roles: ['admin'], revokedAt: null });
      expect((await s.listUsers()).map((u) => u.name)).toEqual(['ada', 'sso-bob']);
    }),
  );

  it(
    'stores sessions by hashed id, deletes them, and prunes the expired',
    withStore(async (s) => {
      const session = (id: string, expiresAt: number) => ({
        idSha256: id,
        user: 'ada',
        createdAt: 1,
        expiresAt,
      });
      await s.commit({ sessions: [session('s1', 100), session('s2', 300)] });
      expect(await s.getSession('s1')).toEqual(session('s1', 100));
      await s.commit({ sessionDeletes: ['s1'] });
      expect(await s.getSession('s1')).toBeNull();
      await s.commit({ sessions: [session('s3', 150)] });
      await s.prune({ maxRunsPerCell: 10, maxAgeMs: 1000, failureMaxAgeMs: 1000 }, 200);
      expect(await s.getSession('s3')).toBeNull();
      expect(await s.getSession('s2')).not.toBeNull();
    }),
  );

  it(
    'appends audit entries with growing ids, lists them newest first, pages by id and prunes the old',
    withStore(async (s) => {
      const entry = (at: number, action: 'user.add' | 'auth.fail') => ({
        at,
        actor: 'cli',
        via: 'cli',
        action,
        target: `t${at}`,
        outcome: 'ok' as const,
        detail: null,
        address: '',
      });
      await s.commit({ audit: [entry(10, 'user.add'), entry(20, 'auth.fail')] });
      await s.commit({ audit: [entry(30, 'user.add')] });
      const all = await s.listAudit({ limit: 10 });
      expect(all.map((a) => a.target)).toEqual(['t30', 't20', 't10']);
      expect(all[0]).toMatchObject(entry(30, 'user.add'));
      expect(all[0]!.id).toBeGreaterThan(all[1]!.id);
      const page = await s.listAudit({ limit: 1, before: all[0]!.id });
      expect(page.map((a) => a.target)).toEqual(['t20']);
      await s.prune({ maxRunsPerCell: 10, maxAgeMs: 5, failureMaxAgeMs: 15 }, 40);
      expect((await s.listAudit({ limit: 10 })).map((a) => a.target)).toEqual(['t30']);
    }),
  );
}
