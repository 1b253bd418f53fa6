import type { Command } from 'commander';
import { placedReleases } from '../adapters/releases/placed.js';
import { AGENT_VERSION } from '../app.js';
import { configOrExit } from './configOrExit.js';

/** `edge-agent releases --config f.yaml [--json]`: agent releases placed, the current one, the running one. */
export function registerReleases(program: Command): void {
  program
    .command('releases')
    .description(
      'Show the agent releases placed under releases.dir, which one current points at, and the running version',
    )
    .requiredOption('--config <file>', 'agent configuration (YAML)')
    .option('--json', 'print as JSON')
    .addHelpText(
      'after',
      '\nDelivery states and refusal reasons of agent-release publications are in `edge-agent status`.\n\nExample:\n  edge-agent releases --config /etc/driftline/agent.yaml',
    )
    .action((o: { config: string; json?: boolean }) => {
      const config = configOrExit(o.config);
      if (!config) return;
      const r = {
        running: AGENT_VERSION,
        install: config.releases.install,
        switch: config.releases.switch,
        ...placedReleases(config.releases.dir),
      };
      if (o.json) {
        process.stdout.write(`${JSON.stringify(r)}\n`);
        return;
      }
      const lines = [
        `running        ${r.running}`,
        `install root   ${r.dir} (releases.install ${r.install}, releases.switch ${r.switch})`,
        `current        ${r.current ?? (r.currentTarget ? `${r.currentTarget} (not a placed release)` : 'none')}`,
        `placed         ${r.placed.length ? r.placed.map((v) => (v === r.current ? `${v} (current)` : v)).join(', ') : 'none'}`,
      ];
      process.stdout.write(`${lines.join('\n')}\n`);
    });
}
