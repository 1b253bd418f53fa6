import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { unknownOptionsFirst } from '@driftline/hop/cli';
import { ConfigProblem } from '@driftline/hop/config';
import { exitProcess, stderrLog, stopWithParent, takeDataDirLock } from '@driftline/hop/lock';
import { Command, CommanderError } from 'commander';
import pino from 'pino';
import { loadOrCreateHubKey } from './adapters/fs/hubKey.js';
import { openHubStore } from './adapters/openStores.js';
import { StoreRefusedError, StoreUnavailableError } from './adapters/postgres/errors.js';
import { createHub, keyPath } from './app.js';
import { addApproveVerb } from './commands/approve.js';
import { addApproverVerbs } from './commands/approver.js';
import { addBackupVerb } from './commands/backup.js';
import { addConfigVerbs } from './commands/config.js';
import { addEnrollVerb } from './commands/enroll.js';
import { addMigrateVerb } from './commands/migrate.js';
import { addMirrorVerbs } from './commands/mirror.js';
import { addPeerVerbs } from './commands/peer.js';
import { addPublicationVerbs } from './commands/publication.js';
import { addRefsVerbs } from './commands/refs.js';
import { addReleaseVerbs } from './commands/release.js';
import { addSourceVerbs } from './commands/source.js';
import { addUserVerbs } from './commands/user.js';
import { addWaiverVerbs } from './commands/waiver.js';
import { configWarnings, type HubConfig, loadConfig } from './config.js';
import { revoke } from './core/enrolment.js';
import { cliAudit } from './core/users.js';
import type { HubStore } from './ports/HubStore.js';

const out = (json: boolean, human: string, data: object) => console.log(json ? JSON.stringify(data) : human);

function config(opts: { config?: string }): HubConfig {
  const r = loadConfig(opts.config, process.env);
  if (!r.ok) {
    console.error(`hub: the configuration is not valid:\n${r.errors.map((e) => `  - ${e}`).join('\n')}`);
    process.exit(2);
  }
  mkdirSync(r.config.dataDir, { recursive: true });
  return r.config;
}

async function withStore<T>(c: HubConfig, fn: (s: HubStore) => Promise<T>): Promise<T> {
  const s = await openHubStore(c);
  try {
    return await fn(s);
  } finally {
    await s.close();
  }
}

const program = new Command('hub')
  .description(
    'Driftline hub: verifies and merges what sites send, keeps history, serves the API, live events and the dashboard.',
  )
  .version('0.1.0')
  .exitOverride()
  // a verb's options stay its own (`hub peer --sites` of the older form beside `hub peer add --sites`)
  .enablePositionalOptions()
  .addHelpText('after', '\nExample:\n  hub init --config hub.yaml && hub run --config hub.yaml');

const verb = (name: string, description: string, example: string) =>
  program
    .command(name)
    .description(description)
    .option('-c, --config <file>', 'hub.yaml (default: built-in defaults, data in ./hub-data)')
    .option('--json', 'machine-readable output')
    .addHelpText('after', `\nExample:\n  ${example}`)
    .exitOverride();

verb(
  'init',
  'create the data directory, the store and the hub key (also done on first `run`)',
  'hub init --config hub.yaml',
).action(async (o) => {
  const c = config(o);
  const key = await loadOrCreateHubKey(keyPath(c.dataDir));
  await withStore(c, async () => {});
  out(o.json, `${key.created ? 'created' : 'kept'} hub key; agents pin:\n${key.publicKeyText}`, {
    publicKey: key.publicKeyText,
    created: key.created,
    dataDir: c.dataDir,
  });
});

verb(
  'key',
  "print the hub's Ed25519 public key, which agents pin as hubPublicKeyFile (it signs acks, plan requests, publication manifests)",
  'hub key --config hub.yaml > hub.pub   # then hubPublicKeyFile: ./hub.pub in each agent.yaml',
).action(async (o) => {
  const c = config(o);
  const key = await loadOrCreateHubKey(keyPath(c.dataDir));
  out(o.json, key.publicKeyText, { publicKey: key.publicKeyText });
});

addEnrollVerb(program, config);

verb(
  'revoke',
  "refuse an agent's bundles from now on (what it sent stays)",
  'hub revoke --site ship-7 --agent a1',
)
  .requiredOption('--site <site>', 'site id')
  .requiredOption('--agent <agent>', 'agent id')
  .action(async (o) => {
    const c = config(o);
    const r = await withStore(c, async (s) => {
      const x = await revoke(s, o.site, o.agent, Date.now());
      if (x.ok) await s.commit({ audit: [cliAudit('agent.revoke', `${o.site}/${o.agent}`, Date.now())] });
      return x;
    });
    if (!r.ok) {
      console.error(`hub revoke: ${r.error}`);
      process.exit(1);
    }
    out(o.json, `revoked ${o.site}/${o.agent}`, { site: o.site, agent: o.agent, revoked: true });
  });

verb('agents', 'list enrolled agents', 'hub agents --json').action(async (o) => {
  const c = config(o);
  const rows = await withStore(c, (s) => s.listAgents());
  out(
    o.json,
    rows
      .map((a) => `${a.site}/${a.agent}\t${a.revokedAt ? 'revoked' : 'active'}\t${a.publicKey}`)
      .join('\n') || '(no agents)',
    {
      agents: rows.map(({ site, agent, publicKey, revokedAt }) => ({
        site,
        agent,
        publicKey,
        revoked: revokedAt !== null,
      })),
    },
  );
});

addPeerVerbs(program, config);

verb(
  'run',
  'serve the hop API, /api, /api/events, the dashboard and /metrics',
  'hub run --config hub.yaml',
).action(async (o) => {
  const c = config(o);
  // Logs are JSON lines on stderr; stdout carries only what was asked for (O2 in docs/architecture.md#invariants).
  const logger = pino({ level: process.env.LOG_LEVEL ?? 'info' }, stderrLog());
  // One hub per SQLite store (issue 42). Hubs on one PostgreSQL database share dataDir by design (decision 160).
  if (c.store.kind === 'sqlite') {
    mkdirSync(c.dataDir, { recursive: true, mode: 0o700 });
    const locked = takeDataDirLock(join(c.dataDir, 'hub.lock'), c.dataDir, 'hub run');
    if (!locked.ok) throw new ConfigProblem(locked.message);
  }
  const hub = await createHub(c, { logger });
  // Stops on a signal from here on, before any line says it serves: a supervisor that sends SIGTERM as
  // soon as it reads one must not meet the default action (killed, exit code null) on a loaded machine.
  // Exits even when closing throws.
  const stop = () => hub.close().finally(() => exitProcess(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  stopWithParent(() => void stop()); // DRIFTLINE_EXIT_WITH_PARENT=1: a supervisor's child
  hub.startTimers();
  const urls = await hub.listen();
  const shared = urls.hop === urls.api;
  logger.info({ url: urls.hop, serves: shared ? 'hop API, /api, dashboard' : 'hop API' }, 'hub listening');
  if (!shared) logger.info({ url: urls.api, serves: '/api, dashboard, /metrics' }, 'hub listening');
  for (const w of configWarnings(c)) logger.warn(w);
  const users = await hub.store.listUsers().catch(() => null); // store unreachable: already logged
  if (users?.length === 0)
    logger.warn('no users yet: nobody can sign in; add one with `hub user add NAME --role admin`');
  // The addresses are in the 'hub listening' log lines; `--json` prints them on stdout for scripts.
  if (o.json)
    out(true, '', { url: urls.hop, hopUrl: urls.hop, apiUrl: urls.api, publicKey: hub.publicKeyText });
});

addPublicationVerbs(program, config);
addSourceVerbs(program);
addMirrorVerbs(program);
addReleaseVerbs(program);
addUserVerbs(program, config);
addConfigVerbs(program);
addRefsVerbs(program);
addApproverVerbs(program, config);
addWaiverVerbs(program, config);
addApproveVerb(program);
addMigrateVerb(program, config);
addBackupVerb(program, config);

try {
  unknownOptionsFirst(program);
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof CommanderError) process.exit(e.exitCode === 0 ? 0 : 2);
  // An address a config key names that cannot be bound: one line naming the key and the port.
  if (e instanceof ConfigProblem) {
    console.error(`hub: ${e.message}`);
    process.exit(2);
  }
  // The store refusing or out of reach is the operator's to fix: one line naming what, no stack trace.
  // A database that refuses this hub (a wrong password, no such database) is a configuration problem, 2,
  // as `hub config check` says it; one that does not answer is a failure, 1 (issue 42).
  if (e instanceof StoreRefusedError || e instanceof StoreUnavailableError) {
    console.error(`hub: ${e.message}`);
    process.exit(e instanceof StoreRefusedError ? 2 : 1);
  }
  throw e;
}
