import { Command, CommanderError } from 'commander';
import { pino } from 'pino';
import { linkConfigFromOptions } from './config.js';
import { PROFILE_NAMES, PROFILES, scaleSettings } from './core/link/profiles.js';
import { describeSchedule } from './core/link/schedule.js';
import { startLink } from './link.js';

const program = new Command('driftline-sim')
  .description('Driftline simulation: emulated links between the site and headquarters, and their profiles.')
  .exitOverride()
  .addHelpText(
    'after',
    '\nExample:\n  npx tsx simulation/src/cli.ts link --target 127.0.0.1:9000 --profile geo',
  );

program
  .command('link')
  .description(
    'Run one emulated link: a TCP proxy from --listen to --target that delays, caps, disturbs and schedules the bytes, with an HTTP control API.',
  )
  .requiredOption('--target <host:port>', 'where connections go (e.g. the relay)')
  .option('--listen <[host:]port>', 'where to listen; port 0 picks a free one', '0')
  .option('--name <name>', 'name in logs and stats (default: the profile)')
  .option('--profile <name>', `start from a profile: ${PROFILE_NAMES.join(', ')}`)
  .option(
    '--time-scale <n>',
    "divide the profile's delays and windows by n (60: an hour passes in a minute)",
    '1',
  )
  .option('--control <port>', 'control API port (0 picks one)', '0')
  .option('--no-control', 'no control API')
  .option('--when-down <mode>', 'refuse | hang new connections while down')
  .option('--delay-ms <ms>', 'one-way delay, both directions (overrides the profile)')
  .option('--jitter-ms <ms>', 'jitter, both directions')
  .option('--bandwidth <rate>', 'bandwidth cap, both directions: 1000000, 512kbit, 2mbit')
  .option('--settings <json>', 'full or partial link settings as JSON (see GET /link)')
  .option('--seed <n>', 'seed for jitter, stalls and resets', '1')
  .option('--json', 'print one JSON line with the ports when ready')
  .addHelpText(
    'after',
    '\nExamples:\n  npx tsx simulation/src/cli.ts link --listen 0 --target 127.0.0.1:9000 --profile geo --time-scale 60\n  npx tsx simulation/src/cli.ts link --target relay:8443 --listen 7000 --profile polar --time-scale 1440 --json\n\nControl API: GET /link, PUT|PATCH /link, POST /link/up|down|auto, GET /link/stats.',
  )
  .action(async (opts) => {
    const r = linkConfigFromOptions({ ...opts, control: opts.control === false ? false : opts.control });
    if (!r.ok) {
      console.error(`driftline-sim link: invalid options:\n${r.problems.map((p) => `  - ${p}`).join('\n')}`);
      process.exit(2);
    }
    const logger = pino({ level: process.env.LOG_LEVEL ?? 'info' }, pino.destination(2));
    const link = await startLink({ ...r.config, logger });
    const s = link.control.settings();
    const ready = {
      name: r.config.name ?? r.config.profile ?? 'link',
      port: link.port,
      listen: `${r.config.listen?.host}:${link.port}`,
      target: `${r.config.target.host}:${r.config.target.port}`,
      control: link.control.url,
      schedule: describeSchedule(s.schedule),
    };
    if (opts.json) console.log(JSON.stringify(ready));
    else
      console.log(
        `Link ${ready.name}: ${ready.listen} -> ${ready.target}, ${describeSchedule(s.schedule)}; control ${ready.control ?? 'off'}`,
      );
    const stop = async () => {
      await link.close();
      process.exit(0);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });

program
  .command('profiles')
  .description('List the link profiles, scaled by --time-scale.')
  .option('--time-scale <n>', 'time compression', '1')
  .option('--json', 'print JSON')
  .addHelpText('after', '\nExample:\n  npx tsx simulation/src/cli.ts profiles --time-scale 1440')
  .action((opts) => {
    const scale = Number(opts.timeScale);
    if (!(scale > 0)) {
      console.error(
        `driftline-sim profiles: --time-scale must be a positive number, got '${opts.timeScale}'`,
      );
      process.exit(2);
    }
    const list = Object.values(PROFILES).map((p) => ({
      name: p.name,
      description: p.description,
      oneWayDelayMs: Math.round((p.oneWayDelayMs / scale) * 100) / 100,
      settings: scaleSettings(p.settings, scale),
    }));
    if (opts.json) return console.log(JSON.stringify(list, null, 2));
    for (const p of list) {
      const bw = p.settings.uplink.bandwidthBps;
      console.log(
        `${p.name.padEnd(12)} one-way ${p.oneWayDelayMs} ms, ${bw ? `${bw / 1e6} Mbit/s` : 'no cap'}, ${describeSchedule(p.settings.schedule)}\n${' '.repeat(13)}${p.description}`,
      );
    }
  });

try {
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof CommanderError) process.exit(e.exitCode === 0 ? 0 : 2);
  throw e;
}
