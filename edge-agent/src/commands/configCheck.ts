import type { Command } from 'commander';
import { z } from 'zod';
import { readModuleVariables } from '../adapters/fs/moduleVariables.js';
import { CliGitProbe } from '../adapters/git/CliGitProbe.js';
import { type AgentConfig, configWarnings, fileProblems, loadConfig } from '../config.js';
import { AgentConfigSchema } from '../configSchema.js';
import { applyCheckoutWarnings } from '../core/apply/applyCheckouts.js';
import { probeUpstreams, type UpstreamReport } from './configOnline.js';
import { type FileReport, probeFiles, probeTools, type ToolReport } from './configProbe.js';

/** The JSON Schema of `agent.yaml` (what the file may hold, before defaults), from the zod schema. */
export function agentConfigJsonSchema(): object {
  return z.toJSONSchema(AgentConfigSchema, { io: 'input', target: 'draft-7' });
}

interface CheckReport {
  ok: boolean;
  site?: string;
  agent?: string;
  cells?: string[];
  problems: string[];
  warnings: string[];
  tools?: ToolReport[];
  files?: FileReport[];
  upstreams?: UpstreamReport[];
  /** Per component, the variables its code declares that are neither sensitive nor public: masked. */
  masked?: { component: string; variables: string[] }[];
}

/**
 * What each component's plans will mask (decision 210): the variables the root module in its working
 * directory declares, less the sensitive ones (never shown anyway) and `redaction.publicVariables`.
 * A component planned from delivered sources has no working directory to read here.
 */
async function maskedVariables(c: AgentConfig): Promise<{ component: string; variables: string[] }[]> {
  const open = new Set(c.redaction.publicVariables);
  const out: { component: string; variables: string[] }[] = [];
  for (const comp of c.components) {
    if (!comp.workingDir) continue;
    const declared = await readModuleVariables(comp.workingDir, c.limits.maxLogBytes);
    const variables = [
      ...new Set(declared.filter((v) => !v.sensitive && !open.has(v.name)).map((v) => v.name)),
    ].sort();
    out.push({ component: comp.name, variables });
  }
  return out;
}

async function check(path: string, online: boolean): Promise<CheckReport> {
  const r = loadConfig(path, { checkFiles: false });
  if (!r.ok) return { ok: false, problems: r.problems, warnings: [] };
  const c = r.config;
  const tools = probeTools(c, process.env);
  const files = await probeFiles(c);
  // A file that cannot be read is already said by probeFiles; keep the directory problems.
  const dirs = fileProblems(c).filter((p) => p.startsWith('components['));
  const problems = [...dirs, ...files.problems, ...tools.problems];
  const warnings = [
    ...tools.warnings,
    ...configWarnings(c),
    ...(await applyCheckoutWarnings(c, new CliGitProbe())),
  ];
  const upstreams = online ? await probeUpstreams(c) : undefined;
  for (const [i, u] of (upstreams ?? []).entries())
    if (u.tokenAccepted === false) problems.push(`upstreams[${i}].tokenFile: ${u.url} ${u.error}`);
  return {
    ok: problems.length === 0,
    site: c.site,
    agent: c.agent,
    cells: c.components.flatMap((comp) => comp.environments.map((e) => `${e.name}/${comp.name}`)),
    problems,
    warnings,
    tools: tools.tools,
    files: files.files,
    ...(upstreams ? { upstreams } : {}),
    masked: await maskedVariables(c),
  };
}

function human(path: string, r: CheckReport): { out: string; err: string } {
  const lines: string[] = [];
  if (r.site)
    lines.push(
      `${path}: ${r.ok ? 'OK' : 'not usable'} — site ${r.site}, agent ${r.agent}, ${r.cells?.length} cell(s): ${r.cells?.join(', ')}`,
    );
  for (const t of r.tools ?? [])
    lines.push(
      `  ${t.component}: ${t.program} ${t.path ? `at ${t.path}${t.version ? `, ${t.version}` : ''}` : 'NOT FOUND'}`,
    );
  for (const f of r.files ?? []) lines.push(`  ${f.key}: ${f.file} ${f.ok ? 'readable' : 'NOT USABLE'}`);
  for (const u of r.upstreams ?? [])
    lines.push(
      `  upstream ${u.url}: ${u.answers ? `answers${u.server ? ` (${u.server})` : ''}` : 'does not answer'}` +
        (u.tokenAccepted === true ? ', token accepted' : u.tokenAccepted === false ? ', token REFUSED' : '') +
        (u.error ? ` — ${u.error}` : ''),
    );
  for (const m of r.masked ?? [])
    lines.push(
      m.variables.length > 0
        ? `  ${m.component}: masks the values of ${m.variables.map((v) => `var.${v}`).join(', ')} (neither sensitive nor in redaction.publicVariables)`
        : `  ${m.component}: masks no variable (each is sensitive or in redaction.publicVariables)`,
    );
  for (const w of r.warnings) lines.push(`warning: ${w}`);
  const err = r.ok
    ? ''
    : `${path}: ${r.problems.length} problem(s):\n${r.problems.map((p) => `  - ${p}`).join('\n')}\n`;
  return { out: lines.length ? `${lines.join('\n')}\n` : '', err };
}

/** `edge-agent config check|schema`. */
export function registerConfig(program: Command): void {
  const config = program
    .command('config')
    .description('Check the agent configuration file, or print its schema');
  config
    .command('check')
    .description(
      'Validate a configuration file: every problem with its key path, whether each component’s terraform/tofu (or command) is there and which version answers, whether the hub key and token files parse, which variables each component’s plans will mask',
    )
    .requiredOption('--config <file>', 'agent configuration (YAML)')
    .option(
      '--online',
      'also try each upstream: GET /v1/health, and whether it accepts the token for this site',
    )
    .option(
      '--json',
      'print { ok, site, agent, cells, problems, warnings, tools, files, upstreams, masked } as JSON',
    )
    .addHelpText(
      'after',
      '\nExit codes: 0 usable (warnings are printed, not counted), 2 a problem (including a token an upstream\n' +
        'refuses), 1 with --online when an upstream does not answer as it should.\n\n' +
        'Example:\n  edge-agent config check --config /etc/driftline/agent.yaml --online',
    )
    .action(async (o: { config: string; online?: boolean; json?: boolean }) => {
      const r = await check(o.config, o.online === true);
      if (o.json) process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
      else {
        const { out, err } = human(o.config, r);
        process.stdout.write(out);
        process.stderr.write(err);
      }
      if (!r.ok) process.exitCode = 2;
      else if (r.upstreams?.some((u) => u.error !== undefined)) process.exitCode = 1;
    });
  config
    .command('schema')
    .description('Print the JSON Schema of agent.yaml (for editors: # yaml-language-server: $schema=<file>)')
    .addHelpText('after', '\nExample:\n  edge-agent config schema > agent.schema.json')
    .action(() => {
      process.stdout.write(`${JSON.stringify(agentConfigJsonSchema(), null, 2)}\n`);
    });
}
