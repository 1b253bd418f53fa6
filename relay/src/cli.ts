import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { unknownOptionsFirst } from '@driftline/hop/cli';
import { ConfigProblem, listenAs } from '@driftline/hop/config';
import { exitProcess, stderrLog, stopWithParent, takeDataDirLock } from '@driftline/hop/lock';
import { Command, CommanderError } from 'commander';
import pino from 'pino';
import { loadOrCreateRelayKey } from './adapters/fs/relayKey.js';
import { createRelay, openStore } from './app.js';
import { addConfigVerbs } from './commands/config.js';
import { configWarnings, loadConfigFile, type RelayConfig, resolveUpstreams } from './config.js';

const CONFIG_HELP = 'relay config file (YAML)';

function configOrExit(path: string): RelayConfig {
  const r = loadConfigFile(path);
  if (!r.ok) {
    console.error(`relay: ${path} is not a usable config:\n${r.errors.map((e) => `  - ${e}`).join('\n')}`);
    process.exit(2);
  }
  return r.value;
}

const program = new Command('relay')
  .description(
    'Driftline relay: store-and-forward node between sites and the hub. Takes custody of bundles from downstream, forwards them upstream when the link allows, and holds downlink traffic.',
  )
  .version('0.1.0')
  .exitOverride()
  .addHelpText(
    'after',
    '\nExample:\n  relay run --config relay.yaml\n  relay token add ship-7 --config relay.yaml',
  );

program
  .command('run')
  .description('serve the hop API and forward upstream until stopped (SIGINT/SIGTERM)')
  .requiredOption('-c, --config <file>', CONFIG_HELP)
  .option('--json', 'print { listening, name } on stdout once listening (logs are JSON lines on stderr)')
  .addHelpText('after', '\nExample:\n  LOG_LEVEL=info relay run --config /etc/driftline/relay.yaml')
  .action(async (opts: { config: string; json?: boolean }) => {
    const cfg = configOrExit(opts.config);
    const ups = resolveUpstreams(cfg, process.env);
    if (!ups.ok) {
      console.error(`relay: ${opts.config}:\n${ups.errors.map((e) => `  - ${e}`).join('\n')}`);
      process.exit(2);
    }
    // One relay per data directory (issue 42): two would both take custody and forward from one store.
    mkdirSync(cfg.dataDir, { recursive: true, mode: 0o700 });
    const locked = takeDataDirLock(join(cfg.dataDir, 'relay.lock'), cfg.dataDir, 'relay run');
    if (!locked.ok) {
      console.error(`relay: ${locked.message}`);
      process.exit(2);
    }
    // Logs are JSON lines on stderr; stdout carries only what was asked for (O2 in docs/architecture.md#invariants).
    const logger = pino(
      { level: process.env.LOG_LEVEL ?? 'info', base: { service: 'relay', name: cfg.name } },
      stderrLog(),
    );
    for (const w of configWarnings(cfg)) logger.warn(w);
    const relay = createRelay(cfg, ups.value, { logger });
    // Stops on a signal from here on, before any line says it listens (a supervisor may send SIGTERM as
    // soon as it reads one); exits even when stopping throws.
    const stop = () => relay.stop().finally(() => exitProcess(0));
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    stopWithParent(() => void stop()); // DRIFTLINE_EXIT_WITH_PARENT=1: a supervisor's child
    const addr = await listenAs('listen.port', cfg.listen, () => relay.start()).catch((e: unknown) => {
      if (!(e instanceof ConfigProblem)) throw e;
      console.error(`relay: ${e.message}`);
      process.exit(2);
    });
    if (opts.json) console.log(JSON.stringify({ listening: addr.url, name: cfg.name }));
  });

const token = program.command('token').description('manage the bearer tokens of downstream peers');

token
  .command('add <name>')
  .description(
    'issue a token for a site or downstream relay (or, with --metrics, for a Prometheus scraper); printed once, stored salted and hashed',
  )
  .requiredOption('-c, --config <file>', CONFIG_HELP)
  .option(
    '--sites <list>',
    'comma-separated sites this peer acts for: posts and pulls downlink (default: <name>)',
  )
  .option('--metrics', 'a token that may only read /metrics (no sites, no hop API)')
  .option('--json', 'print JSON')
  .addHelpText(
    'after',
    '\nExample:\n  relay token add ship-7 --config relay.yaml\n  relay token add relay-2 --sites ship-7,ship-8 --config relay.yaml --json\n  relay token add prometheus --metrics --config relay.yaml',
  )
  .action((name: string, opts: { config: string; sites?: string; metrics?: boolean; json?: boolean }) => {
    if (opts.metrics && opts.sites) {
      console.error('relay: --metrics and --sites do not go together (a metrics token acts for no site)');
      process.exit(2);
    }
    const { custody, tokens } = openStore(configOrExit(opts.config));
    const scope = opts.metrics ? 'metrics' : 'peer';
    const sites = opts.metrics
      ? []
      : opts.sites
        ? opts.sites
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
        : [name];
    const t = tokens.add(name, sites, scope);
    custody.close();
    if (opts.json) console.log(JSON.stringify({ name, sites, scope, token: t }));
    else
      console.log(
        `${scope === 'metrics' ? 'metrics-only token' : 'token'} for ${name} (shown once; give it to that ${scope === 'metrics' ? 'scraper' : 'peer'}):\n${t}`,
      );
  });

token
  .command('revoke <site>')
  .description('revoke every token issued for a site or downstream relay')
  .requiredOption('-c, --config <file>', CONFIG_HELP)
  .option('--json', 'print JSON')
  .addHelpText('after', '\nExample:\n  relay token revoke ship-7 --config relay.yaml')
  .action((site: string, opts: { config: string; json?: boolean }) => {
    const { custody, tokens } = openStore(configOrExit(opts.config));
    const n = tokens.revoke(site);
    custody.close();
    if (opts.json) console.log(JSON.stringify({ name: site, revoked: n }));
    else console.log(n ? `revoked ${n} token(s) of ${site}` : `no live token for ${site}`);
    if (n === 0) process.exitCode = 1;
  });

program
  .command('key')
  .description(
    "print this relay's public key (made in its data dir on first use, mode 0600) for `hub peer add NAME --key …`",
  )
  .requiredOption('-c, --config <file>', CONFIG_HELP)
  .option('--json', 'print { name, publicKey, keyFile, created }')
  .addHelpText(
    'after',
    '\nExample:\n  relay key --config relay.yaml\n  hub peer add relay-1 --sites ship-7 --key "$(relay key --config relay.yaml)"',
  )
  .action((opts: { config: string; json?: boolean }) => {
    const cfg = configOrExit(opts.config);
    try {
      const k = loadOrCreateRelayKey(cfg.dataDir);
      if (opts.json)
        console.log(
          JSON.stringify({ name: cfg.name, publicKey: k.publicKey, keyFile: k.path, created: k.created }),
        );
      else console.log(k.publicKey);
    } catch (e) {
      console.error(`relay key: ${(e as Error).message}`);
      process.exit(1);
    }
  });

addConfigVerbs(program);

try {
  unknownOptionsFirst(program);
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof CommanderError) process.exit(e.exitCode === 0 ? 0 : 2);
  throw e;
}
