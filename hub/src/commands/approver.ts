import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  exportPrivateKeyPem,
  generateSigningKeyPair,
  publicKeyFromText,
  publicKeyToText,
} from '@driftline/protocol';
import type { Command } from 'commander';
import { openHubStore } from '../adapters/openStores.js';
import type { HubConfig } from '../config.js';
import { cliAudit } from '../core/users.js';
import type { PeopleStore } from '../ports/HubStore.js';

const NAME = /^[A-Za-z0-9][A-Za-z0-9 ._@'-]{0,99}$/;
const KEY = /^ed25519:[A-Za-z0-9_-]{43}$/;

/**
 * `hub approver keygen|add|list|remove`: approver keys. An approver's private key stays with the person
 * (`keygen` writes it where they run it); the hub records only who holds which public key, so the
 * dashboard names people. Agents pin the public keys they accept in their own config.
 */
export function addApproverVerbs(program: Command, config: (o: { config?: string }) => HubConfig): void {
  const approver = program
    .command('approver')
    .description('approver keys: make one, and record who holds which (agents pin them in agent.yaml)')
    .addHelpText(
      'after',
      '\nExample:\n  hub approver keygen --out ~/.driftline/approver.pem\n  hub approver add "Ada Lovelace" --key ed25519:…',
    );
  const withStore = async <T>(o: { config?: string }, fn: (s: PeopleStore) => Promise<T>): Promise<T> => {
    const s = await openHubStore(config(o));
    try {
      return await fn(s);
    } finally {
      await s.close();
    }
  };
  const verb = (name: string, description: string, example: string) =>
    approver
      .command(name)
      .description(description)
      .option('--json', 'machine-readable output')
      .addHelpText('after', `\nExample:\n  ${example}`)
      .exitOverride();
  const storeVerb = (name: string, description: string, example: string) =>
    verb(name, description, example).option('-c, --config <file>', 'hub.yaml');

  verb(
    'keygen',
    'make an approver key pair: the private key (PKCS#8 PEM, mode 0600) goes to --out and never leaves this machine; prints the public key to pin',
    'hub approver keygen --out ~/.driftline/approver.pem',
  )
    .requiredOption('--out <file>', 'where to write the private key (an existing file is never replaced)')
    .action(async (o: { out: string; json?: boolean }) => {
      const pair = await generateSigningKeyPair();
      const path = resolve(o.out);
      try {
        await writeFile(path, await exportPrivateKeyPem(pair.privateKey), { mode: 0o600, flag: 'wx' });
      } catch (e) {
        const code = (e as { code?: string }).code;
        console.error(
          `hub approver keygen: cannot write ${path}: ${code === 'EEXIST' ? 'the file exists (choose another --out or remove it)' : (e as Error).message}`,
        );
        process.exit(1);
      }
      const key = await publicKeyToText(pair.publicKey);
      if (o.json) console.log(JSON.stringify({ key, privateKeyFile: path }));
      else
        console.log(
          `${key}\n\nwrote the private key to ${path} (keep it: it is what approves).\n` +
            "Pin the line above in the agents' apply.approvers (agent.yaml), and name it at the hub:\n" +
            `  hub approver add NAME --key ${key}`,
        );
    });

  storeVerb(
    'add',
    'record who holds an approver public key, so the dashboard names them (a name already added gets the new key)',
    'hub approver add "Ada Lovelace" --key ed25519:AbC…',
  )
    .argument('<name>', "the person (1-100 letters, digits, spaces and . _ @ ' -)")
    .requiredOption(
      '--key <key>',
      "the public key, 'ed25519:' and 43 base64url characters (hub approver keygen)",
    )
    .action(async (name: string, o: { key: string; json?: boolean; config?: string }) => {
      if (!NAME.test(name)) {
        console.error(
          `hub approver add: name ${JSON.stringify(name.slice(0, 100))}: 1-100 letters, digits, spaces and . _ @ ' -`,
        );
        process.exit(2);
      }
      const key = o.key.trim();
      const valid =
        KEY.test(key) &&
        (await publicKeyFromText(key).then(
          () => true,
          () => false,
        ));
      if (!valid) {
        console.error(
          `hub approver add: --key: not an approver public key (expected 'ed25519:' and 43 base64url characters, as hub approver keygen prints)`,
        );
        process.exit(2);
      }
      const addedAt = Date.now();
      const taken = await withStore(o, async (s) => {
        const before = await s.listApprovers();
        const other = before.find((a) => a.key === key && a.name !== name);
        if (other) {
          await s.commit({
            audit: [
              cliAudit('approver.add', name, addedAt, 'failed', `key ${key} is already ${other.name}'s`),
            ],
          });
          return other.name;
        }
        // The old key of a name given a new one stays in the audit row: who held what, and when.
        const was = before.find((a) => a.name === name);
        const detail = was && was.key !== key ? `key ${key} (was ${was.key})` : `key ${key}`;
        await s.commit({
          approvers: [{ name, key, addedAt }],
          audit: [cliAudit('approver.add', name, addedAt, 'ok', detail)],
        });
        return null;
      });
      if (taken) {
        console.error(
          `hub approver add: that key is already ${taken}'s (hub approver remove '${taken}' first)`,
        );
        process.exit(1);
      }
      if (o.json) console.log(JSON.stringify({ name, key, addedAt: new Date(addedAt).toISOString() }));
      else console.log(`added approver ${name}: ${key}`);
    });

  storeVerb('list', 'list approvers and their public keys', 'hub approver list --json').action(
    async (o: { json?: boolean; config?: string }) => {
      const rows = await withStore(o, (s) => s.listApprovers());
      const approvers = rows.map((a) => ({
        name: a.name,
        key: a.key,
        addedAt: new Date(a.addedAt).toISOString(),
      }));
      if (o.json) console.log(JSON.stringify({ approvers }));
      else
        console.log(
          approvers.map((a) => `${a.name}\t${a.key}\t${a.addedAt}`).join('\n') ||
            '(no approvers: hub approver add NAME --key ed25519:…)',
        );
    },
  );

  storeVerb(
    'remove',
    'forget who holds a key (agents that pin it still accept it: remove it from their apply.approvers too)',
    'hub approver remove "Ada Lovelace"',
  )
    .argument('<name>', 'the approver')
    .action(async (name: string, o: { json?: boolean; config?: string }) => {
      const found = await withStore(o, async (s) => {
        const was = (await s.listApprovers()).find((a) => a.name === name);
        if (!was) return false;
        await s.commit({
          approverDeletes: [name],
          audit: [cliAudit('approver.remove', name, Date.now(), 'ok', `key ${was.key}`)],
        });
        return true;
      });
      if (!found) {
        console.error(`hub approver remove: no approver ${JSON.stringify(name)} (see hub approver list)`);
        process.exit(1);
      }
      if (o.json) console.log(JSON.stringify({ name, removed: true }));
      else console.log(`removed approver ${name} (agents that pin the key still accept it)`);
    });
}
