import { existsSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { newSecret, sha256Hex } from '../adapters/http/credentials.js';
import { openHubStore } from '../adapters/openStores.js';
import type { HubConfig } from '../config.js';
import { parseRoles } from '../core/roles.js';
import { addUser, revokeUser } from '../core/users.js';
import type { PeopleStore } from '../ports/HubStore.js';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** `hub user add|revoke|list`: the people who may use the dashboard and `/api` (S5 in docs/architecture.md#invariants). */
export function addUserVerbs(program: Command, config: (o: { config?: string }) => HubConfig): void {
  const user = program
    .command('user')
    .description('add, revoke and list the people (and CI jobs) who may use the dashboard and /api')
    .addHelpText('after', '\nExample:\n  hub user add ada --role operator,publisher');
  const withStore = async <T>(o: { config?: string }, fn: (s: PeopleStore) => Promise<T>): Promise<T> => {
    const s = await openHubStore(config(o));
    try {
      return await fn(s);
    } finally {
      await s.close();
    }
  };
  const verb = (name: string, description: string, example: string) =>
    user
      .command(name)
      .description(description)
      .option('-c, --config <file>', 'hub.yaml')
      .option('--json', 'machine-readable output')
      .addHelpText('after', `\nExample:\n  ${example}`)
      .exitOverride();

  verb(
    'add',
    'add a user with one or more roles; prints its token once (stored only as a hash)',
    'hub user add ada --role viewer,operator --json',
  )
    .argument('<name>', 'user name (for SSO: exactly the name the proxy sends)')
    .requiredOption('--role <roles>', 'viewer|operator|publisher|approver|admin, comma-separated')
    .option('--sso', 'no token: the user signs in only through the SSO proxy (api.sso)')
    .option(
      '--write-token <file>',
      "write the token alone to this new file (mode 0600), for a CI job's --token-file; print no token",
    )
    .action(async (name: string, o) => {
      const roles = parseRoles(String(o.role));
      if (!roles.ok) {
        console.error(`hub user add: --role: ${roles.error}`);
        process.exit(2);
      }
      if (o.writeToken && o.sso) {
        console.error('hub user add: --write-token and --sso: an SSO user has no token; drop one of them');
        process.exit(2);
      }
      if (o.writeToken && existsSync(o.writeToken)) {
        console.error(
          `hub user add: --write-token ${o.writeToken}: the file exists; remove it or name a new one`,
        );
        process.exit(2);
      }
      const token = o.sso ? null : newSecret();
      const r = await withStore(o, (s) =>
        addUser(s, { name, roles: roles.roles, tokenSha256: token ? sha256Hex(token) : null }, Date.now()),
      );
      if (!r.ok) {
        console.error(`hub user add: ${r.error}`);
        process.exit(1);
      }
      if (o.writeToken && token) {
        writeFileSync(o.writeToken, `${token}\n`, { mode: 0o600, flag: 'wx' });
        const out = { name, roles: roles.roles, tokenFile: resolve(o.writeToken) };
        console.log(
          o.json
            ? JSON.stringify(out)
            : `added ${name} (${roles.roles.join(', ')}); token written to ${out.tokenFile}`,
        );
      } else if (o.json) console.log(JSON.stringify({ name, roles: roles.roles, token }));
      else if (token) console.log(`token for ${name} (${roles.roles.join(', ')}; shown once):\n${token}`);
      else console.log(`added ${name} (${roles.roles.join(', ')}), signing in through the SSO proxy`);
    });

  verb(
    'revoke',
    "stop a user's token and sessions at once (the audit log keeps the name)",
    'hub user revoke ada',
  )
    .argument('<name>', 'user name')
    .action(async (name: string, o) => {
      const r = await withStore(o, (s) => revokeUser(s, name, Date.now()));
      if (!r.ok) {
        console.error(`hub user revoke: ${r.error}`);
        process.exit(1);
      }
      if (o.json) console.log(JSON.stringify({ name, revoked: true }));
      else console.log(`revoked ${name}`);
    });

  verb('list', 'list users, their roles and how they sign in', 'hub user list --json').action(async (o) => {
    const rows = await withStore(o, (s) => s.listUsers());
    const users = rows.map((u) => ({
      name: u.name,
      roles: u.roles,
      signIn: u.tokenSha256 ? 'token' : 'sso',
      createdAt: iso(u.createdAt),
      revokedAt: iso(u.revokedAt),
    }));
    if (o.json) console.log(JSON.stringify({ users }));
    else
      console.log(
        users
          .map((u) => `${u.name}\t${u.roles.join(',')}\t${u.signIn}\t${u.revokedAt ? 'revoked' : 'active'}`)
          .join('\n') || '(no users: hub user add NAME --role admin)',
      );
  });
}
