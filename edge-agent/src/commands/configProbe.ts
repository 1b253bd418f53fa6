import { spawnSync } from 'node:child_process';
import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { publicKeyFromText } from '@driftline/protocol';
import type { AgentConfig, ComponentConfig } from '../config.js';
import { hubKeyProblem } from '../core/apply/hubKeyProblem.js';

/** What `config check` found for one component's program. */
export interface ToolReport {
  component: string;
  /** `tool` or `command` (a command override). */
  key: 'tool' | 'command';
  program: string;
  /** Where it was found, or null when it is not there. */
  path: string | null;
  /** What `<tool> version` answered (e.g. `Terraform v1.9.8`); null when not asked or no answer. */
  version: string | null;
}

/** What `config check` found for a file the config points at. */
export interface FileReport {
  key: string;
  file: string;
  ok: boolean;
  /** What it holds, when it parses (e.g. the key as `ed25519:…`); never a token. */
  detail?: string;
}

export interface Findings {
  problems: string[];
  warnings: string[];
}

const executable = (file: string): boolean => {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
};

/**
 * Where `program` would be run from: a name is looked up on PATH as the agent's runs do; a path with a
 * slash is taken from `cwd` (the working directory the run starts in).
 */
export function findProgram(program: string, env: NodeJS.ProcessEnv, cwd: string): string | null {
  if (program.includes('/')) {
    const file = isAbsolute(program) ? program : resolve(cwd, program);
    return executable(file) ? file : null;
  }
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const file = join(dir, program);
    if (executable(file)) return file;
  }
  return null;
}

const TOOL_NAME = { terraform: 'Terraform', tofu: 'OpenTofu' } as const;

/** Asks the tool its version: `version -json` (Terraform 0.13+, OpenTofu), else the first line of `version`. */
function askVersion(path: string, tool: 'terraform' | 'tofu', cwd: string, env: NodeJS.ProcessEnv) {
  const ask = (args: string[]) =>
    spawnSync(path, args, { cwd, env: { ...env, TF_IN_AUTOMATION: '1' }, encoding: 'utf8', timeout: 30_000 });
  const json = ask(['version', '-json']);
  if (json.status === 0) {
    try {
      const v = (JSON.parse(json.stdout) as { terraform_version?: unknown }).terraform_version;
      if (typeof v === 'string') return { version: `${TOOL_NAME[tool]} v${v}` };
    } catch {
      // not JSON: an old Terraform; the plain form below says it
    }
  }
  const plain = ask(['version']);
  const first = plain.stdout?.split('\n')[0]?.trim();
  if (plain.status === 0 && first) return { version: first };
  const why =
    plain.error?.message ??
    `exit ${plain.status ?? plain.signal}: ${plain.stderr?.trim().split('\n')[0] ?? ''}`;
  return { version: null, error: why };
}

/** Checks that each component's program is there and, for terraform/tofu, which version answers. */
export function probeTools(config: AgentConfig, env: NodeJS.ProcessEnv): Findings & { tools: ToolReport[] } {
  const problems: string[] = [];
  const warnings: string[] = [];
  const asked = new Map<string, ReturnType<typeof askVersion>>();
  const tools = config.components.map((c: ComponentConfig, i): ToolReport => {
    const key = c.command ? 'command' : 'tool';
    const program = c.command ? (c.command[0] as string) : c.tool;
    const cwd = c.workingDir ?? process.cwd();
    const path = findProgram(program, env, cwd);
    const report: ToolReport = { component: c.name, key, program, path, version: null };
    if (!path) {
      problems.push(
        c.command
          ? `components[${i}].command: "${program}" is not an executable file${program.includes('/') ? ` (looked in ${c.workingDir})` : ' on PATH'}`
          : `components[${i}].tool: ${program} is not on PATH (install it, or add its folder to the agent's PATH; without it every plan of ${c.name} fails)`,
      );
      return report;
    }
    if (c.command) return report;
    const v = asked.get(path) ?? askVersion(path, c.tool, cwd, env);
    asked.set(path, v);
    report.version = v.version;
    if (!v.version)
      warnings.push(`components[${i}].tool: ${path} did not answer \`${program} version\` (${v.error})`);
    return report;
  });
  return { problems, warnings, tools };
}

/** Checks that the pinned hub key and every token file are readable and parse. */
export async function probeFiles(config: AgentConfig): Promise<Findings & { files: FileReport[] }> {
  const problems: string[] = [];
  const files: FileReport[] = [];
  const read = (key: string, file: string): string | null => {
    try {
      return readFileSync(file, 'utf8');
    } catch (e) {
      problems.push(`${key}: cannot read "${file}": ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
      files.push({ key, file, ok: false });
      return null;
    }
  };
  const keyText = read('hubPublicKeyFile', config.hubPublicKeyFile);
  if (keyText !== null) {
    try {
      const hubKey = await publicKeyFromText(keyText);
      // What `run` refuses to start with, `config check` refuses too.
      const pinned = await hubKeyProblem(config, hubKey);
      if (pinned) problems.push(pinned);
      files.push({
        key: 'hubPublicKeyFile',
        file: config.hubPublicKeyFile,
        ok: true,
        detail: keyText.trim(),
      });
    } catch (e) {
      problems.push(
        `hubPublicKeyFile: "${config.hubPublicKeyFile}" is not the hub's public key: ${(e as Error).message} (put what \`hub key\` prints in it)`,
      );
      files.push({ key: 'hubPublicKeyFile', file: config.hubPublicKeyFile, ok: false });
    }
  }
  config.upstreams.forEach((u, i) => {
    const key = `upstreams[${i}].tokenFile`;
    const text = read(key, u.tokenFile);
    if (text === null) return;
    const token = text.trim();
    const why = !token ? 'is empty' : /\s/.test(token) ? 'holds more than one word' : null;
    if (why)
      problems.push(
        `${key}: "${u.tokenFile}" ${why} (put the one token \`relay token add ${config.site}\` printed in it)`,
      );
    files.push({ key, file: u.tokenFile, ok: why === null });
  });
  return { problems, warnings: [], files };
}
