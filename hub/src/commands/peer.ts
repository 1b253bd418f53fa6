import { randomBytes } from 'node:crypto';
import { parseCliDuration, publicKeyFromText } from '@driftline/protocol';
import type { Command } from 'commander';
import { sha256Hex } from '../adapters/hop/HubHopBackend.js';
import { openHubStore } from '../adapters/openStores.js';
import type { HubConfig } from '../config.js';
import { addPeer, parsePeerSites, peerState, revokePeer, rotatePeer, setPeerSites } from '../core/peers.js';
import type { PeopleStore } from '../ports/HubStore.js';

type Opts = { config?: string; json?: boolean };
const iso = (ms: number | null | undefined) => (ms == null ? null : new Date(ms).toISOString());
const newToken = () => randomBytes(24).toString('base64url');

/**
 * `hub peer list|add|revoke|rotate|sites`: the bearer tokens relays (and agents talking to the hub
 * directly) present, and the sites each acts for; every change is audited. A relay learns its sites
 * from here (`GET /v1/peer`), so there is no second list to keep in step.
 * `hub peer --name N --sites S` (before these verbs) still works: it is `hub peer add N --sites S`.
 */
export function addPeerVerbs(program: Command, config: (o: { config?: string }) => HubConfig): void {
  const withStore = async <T>(o: Opts, fn: (s: PeopleStore) => Promise<T>): Promise<T> => {
    const s = await openHubStore(config(o));
    try {
      return await fn(s);
    } finally {
      await s.close();
    }
  };
  const fail = (verb: string, error: string, code = 1): never => {
    console.error(`${['hub peer', verb].filter(Boolean).join(' ')}: ${error}`);
    process.exit(code);
  };
  const sitesOf = (verb: string, text: string) => {
    const r = parsePeerSites(text);
    return r.ok ? r.sites : fail(verb, r.error, 2);
  };
  /** `--key`: a relay's public key as `relay key` prints it; a bad one stops the command (exit 2). */
  const keyOf = async (verb: string, text: string | undefined): Promise<string | null> => {
    if (text === undefined) return null;
    try {
      await publicKeyFromText(text);
      return text.trim();
    } catch (e) {
      return fail(
        verb,
        `--key: ${(e as Error).message} (paste what \`relay key --config relay.yaml\` prints)`,
        2,
      );
    }
  };
  const add = async (name: string, o: Opts & { sites: string; key?: string | false }) => {
    const sites = sitesOf('add', o.sites);
    // A relay is enrolled with its key unless the operator says otherwise (issue 42, decision 415); an
    // agent talking to the hub directly (`site/agent`) signs with its own enrolled key.
    if (o.key === undefined && !name.includes('/'))
      fail(
        'add',
        `a relay is enrolled with its public key: --key "$(relay key --config relay.yaml)" on the relay's machine; or --no-key to enrol ${name} without one (the hub then cannot check the clocks it passes on, only bound them, and Links shows it unkeyed)`,
        2,
      );
    const publicKey = await keyOf('add', o.key === false ? undefined : o.key);
    const token = newToken();
    const r = await withStore(o, (s) =>
      addPeer(s, { name, sites, tokenSha256: sha256Hex(token), publicKey }, Date.now()),
    );
    if (!r.ok) fail('add', r.error);
    // the token is the last line, so `| tail -n 1 > relay-upstream.token` keeps working
    if (o.json) console.log(JSON.stringify({ name, sites, publicKey, token }));
    else
      console.log(
        `${publicKey ? `key ${publicKey} enrolled: its signed clock records are checked\n` : o.key === false ? `${name} enrolled without a key (unkeyed): its clock statements are bounded, not checked\n` : ''}token for ${name} (shown once):\n${token}`,
      );
  };

  const peer = program
    .command('peer')
    .description(
      'the tokens relays (and agents talking to the hub directly) present, and the sites each acts for',
    )
    .option('-c, --config <file>', 'hub.yaml')
    .option('--json', 'machine-readable output')
    .option('--name <name>', '(older form of `hub peer add NAME`)')
    .option('--sites <list>', '(older form) sites the peer acts for', '*')
    .option('--key <ed25519:…>', "(older form) the relay's public key (`relay key`)")
    .option('--no-key', '(older form) enrol the relay without a key')
    .addHelpText(
      'after',
      '\nExample:\n  hub peer add relay-1 --sites ship-7 --key "$(relay key --config relay.yaml)" --config hub.yaml | tail -n 1 > relay-upstream.token\n  hub peer list --config hub.yaml',
    )
    .exitOverride()
    // the verbs' own --sites, --json and -c are theirs, not the older form's
    .enablePositionalOptions()
    .action(async (o: Opts & { name?: string; sites: string; key?: string | false }) => {
      if (!o.name) fail('', 'name a verb (list, add, revoke, rotate, sites) or see hub peer --help', 2);
      await add(o.name as string, o);
    });
  const verb = (name: string, description: string, example: string) =>
    peer
      .command(name)
      .description(description)
      .option('-c, --config <file>', 'hub.yaml')
      .option('--json', 'machine-readable output')
      .addHelpText('after', `\nExample:\n  ${example}`)
      .exitOverride();

  verb(
    'list',
    'list peer tokens: name, sites, created, last used, state',
    'hub peer list --config hub.yaml --json',
  ).action(async (o: Opts) => {
    const now = Date.now();
    const peers = (await withStore(o, (s) => s.listPeers())).map((p) => ({
      name: p.name,
      token: p.tokenSha256.slice(0, 8),
      sites: p.sites,
      publicKey: p.publicKey ?? null,
      createdAt: iso(p.createdAt),
      lastUsedAt: iso(p.lastUsedAt),
      state: peerState(p, now),
      until: iso(p.revokedAt),
    }));
    if (o.json) return console.log(JSON.stringify({ peers }));
    if (peers.length === 0) return console.log('(no peers: hub peer add NAME --sites SITE,…)');
    console.log('NAME\tTOKEN\tSITES\tKEY\tCREATED\tLAST USED\tSTATE');
    for (const p of peers) {
      const state =
        p.state === 'expiring'
          ? `expiring ${p.until}`
          : p.state === 'revoked'
            ? `revoked ${p.until}`
            : 'active';
      console.log(
        [
          p.name,
          p.token,
          p.sites.join(','),
          p.publicKey ?? '-',
          p.createdAt ?? '-',
          p.lastUsedAt ?? 'never',
          state,
        ].join('\t'),
      );
    }
  });

  verb(
    'add',
    'issue the first token for a relay or an agent talking to the hub directly; prints it once (stored hashed)',
    'hub peer add relay-1 --sites ship-7,ship-8 --key "$(relay key --config relay.yaml)" --config hub.yaml | tail -n 1 > relay-upstream.token',
  )
    .argument('<name>', "the relay's name (relay.yaml name), or site/agent")
    .requiredOption('--sites <list>', "comma-separated sites it acts for, or '*' for every site")
    .option(
      '--key <ed25519:…>',
      "the relay's public key (`relay key`): its clock records are then checked, not only bounded; required for a relay unless --no-key",
    )
    .option(
      '--no-key',
      'enrol a relay without a key: the clocks it passes on are bounded, never checked; Links shows it unkeyed',
    )
    .action(add);

  verb(
    'revoke',
    'every token of the peer stops working now (what it delivered stays)',
    'hub peer revoke relay-1',
  )
    .argument('<name>', 'the peer')
    .action(async (name: string, o: Opts) => {
      const r = await withStore(o, (s) => revokePeer(s, name, Date.now()));
      if (!r.ok) fail('revoke', r.error);
      else if (o.json) console.log(JSON.stringify({ name, revoked: r.tokens }));
      else console.log(`revoked ${r.tokens} token(s) of ${name}`);
    });

  verb(
    'rotate',
    'issue the peer a new token (printed once); its older tokens stop working after --grace',
    'hub peer rotate relay-1 --grace 1h | tail -n 1 > relay-upstream.token',
  )
    .argument('<name>', 'the peer')
    .option('--grace <duration>', 'how long the old token keeps working: 0, 90s, 30m, 1h, 2d', '0')
    .option('--key <ed25519:…>', "the relay's new public key (`relay key`); default: the key it had")
    .action(async (name: string, o: Opts & { grace: string; key?: string }) => {
      const graceMs = o.grace.trim() === '0' ? 0 : parseCliDuration(o.grace);
      if (graceMs === null)
        return fail('rotate', `--grace: '${o.grace}' is not a duration (0, 90s, 30m, 1h, 2d)`, 2);
      const publicKey = await keyOf('rotate', o.key);
      const token = newToken();
      const r = await withStore(o, (s) =>
        rotatePeer(s, { name, tokenSha256: sha256Hex(token), graceMs, publicKey }, Date.now()),
      );
      if (!r.ok) return fail('rotate', r.error);
      const until = iso(r.oldUntil);
      if (o.json)
        console.log(
          JSON.stringify({
            name,
            sites: r.peer.sites,
            publicKey: r.peer.publicKey ?? null,
            token,
            oldTokenUntil: until,
          }),
        );
      else
        console.log(
          `${graceMs === 0 ? 'the old token no longer works' : `the old token works until ${until}`}\n` +
            `new token for ${name} (shown once; put it in the relay's tokenFile, re-read without a restart):\n${token}`,
        );
    });

  verb(
    'sites',
    'set the sites the peer acts for; its relay learns them from the hub (no relay.yaml change)',
    'hub peer sites relay-1 --sites ship-7,ship-8',
  )
    .argument('<name>', 'the peer')
    .requiredOption('--sites <list>', "comma-separated sites, or '*' for every site")
    .action(async (name: string, o: Opts & { sites: string }) => {
      const sites = sitesOf('sites', o.sites);
      const r = await withStore(o, (s) => setPeerSites(s, name, sites, Date.now()));
      if (!r.ok) fail('sites', r.error);
      else if (o.json) console.log(JSON.stringify({ name, sites, before: r.before }));
      else console.log(`${name} acts for ${sites.join(',')} (was ${r.before.join(',')})`);
    });
}
