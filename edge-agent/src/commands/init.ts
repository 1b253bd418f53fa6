import { enrolmentLine } from '@driftline/protocol';
import type { Command } from 'commander';
import { agentKeyPath, initAgentKey } from '../adapters/fs/agentKeys.js';
import { configOrExit } from './configOrExit.js';

/** `edge-agent init --config f.yaml`: creates the agent's keypair and prints the hub's enrolment line. */
export function registerInit(program: Command): void {
  program
    .command('init')
    .description("Create this agent's signing key (once) and print the line that enrols it at the hub")
    .requiredOption('--config <file>', 'agent configuration (YAML)')
    .option('--json', 'print { site, agent, publicKey, keyFile, created, enrol } as JSON')
    .addHelpText(
      'after',
      '\nThe key is written to <dataDir>/agent-key.pem (mode 0600) and never leaves the site; an existing key is kept.\n' +
        'Paste the printed line on the hub machine.\n\nExample:\n  edge-agent init --config /etc/driftline/agent.yaml',
    )
    .action(async (o: { config: string; json?: boolean }) => {
      const config = configOrExit(o.config, false);
      if (!config) return;
      const r = await initAgentKey(config.dataDir);
      const enrol = enrolmentLine(config.site, config.agent, r.publicKey);
      if (o.json) {
        const out = {
          site: config.site,
          agent: config.agent,
          publicKey: r.publicKey,
          keyFile: agentKeyPath(config.dataDir),
          created: r.created,
          enrol,
        };
        process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
        return;
      }
      process.stderr.write(
        r.created
          ? `created ${agentKeyPath(config.dataDir)}; enrol this agent at the hub with:\n`
          : `key ${agentKeyPath(config.dataDir)} already exists (kept); enrol with:\n`,
      );
      process.stdout.write(`${enrol}\n`);
    });
}
