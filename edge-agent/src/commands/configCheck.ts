import type { Command } from 'commander';
import { loadConfig } from '../config.js';

/** `edge-agent config check --config f.yaml`. */
export function registerConfig(program: Command): void {
  const config = program.command('config').description('Work with the agent configuration file');
  config
    .command('check')
    .description('Validate a configuration file and list every problem with its key path')
    .requiredOption('--config <file>', 'agent configuration (YAML)')
    .option('--json', 'print { ok, problems | cells } as JSON')
    .addHelpText(
      'after',
      '\nExit codes: 0 valid, 2 invalid.\n\nExample:\n  edge-agent config check --config /etc/driftline/agent.yaml',
    )
    .action((o: { config: string; json?: boolean }) => {
      const r = loadConfig(o.config);
      if (!r.ok) {
        if (o.json) process.stdout.write(`${JSON.stringify({ ok: false, problems: r.problems }, null, 2)}\n`);
        else
          process.stderr.write(
            `${o.config}: ${r.problems.length} problem(s):\n${r.problems.map((p) => `  - ${p}`).join('\n')}\n`,
          );
        process.exitCode = 2;
        return;
      }
      const cells = r.config.components.flatMap((c) => c.environments.map((e) => `${e.name}/${c.name}`));
      if (o.json)
        process.stdout.write(
          `${JSON.stringify({ ok: true, site: r.config.site, agent: r.config.agent, cells }, null, 2)}\n`,
        );
      else
        process.stdout.write(
          `${o.config}: OK — site ${r.config.site}, agent ${r.config.agent}, ${cells.length} cell(s): ${cells.join(', ')}\n`,
        );
    });
}
