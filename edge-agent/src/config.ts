import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import {
  checkConfig,
  PUBLICATIONS_KEY,
  parseYamlText,
  renamedKeyProblem,
  renamedKeyWarning,
} from '@driftline/hop/config';
import type { z } from 'zod';
import { AgentConfigSchema } from './configSchema.js';

/**
 * Reads and validates the agent's configuration file (YAML); the schema is in configSchema.ts. Every
 * relative path resolves from the folder of the file, never from the process's working directory
 * (O1 in docs/architecture.md#invariants): `dataDir`, `hubPublicKeyFile`, upstream `tokenFile`s, component `workingDir`s (an
 * environment's `workingDir` from its component's) and `publications.accept.*.dir`.
 */
export { AgentConfigSchema };

export type AgentConfig = z.infer<typeof AgentConfigSchema>;
export type ComponentConfig = AgentConfig['components'][number];
export type EnvironmentConfig = ComponentConfig['environments'][number];

export type LoadConfigResult = { ok: true; config: AgentConfig } | { ok: false; problems: string[] };

function absolutise(c: AgentConfig, base: string): AgentConfig {
  const abs = (p: string) => resolve(base, p);
  // `bundles:` (the name before decision 170) stands for `publications:` when given; both read the same.
  const given = c.bundles ?? c.publications;
  const publications = {
    ...given,
    accept: Object.fromEntries(Object.entries(given.accept).map(([k, v]) => [k, { ...v, dir: abs(v.dir) }])),
  };
  return {
    ...c,
    dataDir: abs(c.dataDir),
    hubPublicKeyFile: abs(c.hubPublicKeyFile),
    upstreams: c.upstreams.map((u) => ({ ...u, tokenFile: abs(u.tokenFile) })),
    components: c.components.map((comp) => {
      // A delivered component's directories are inside its repository: they resolve at plan time.
      const dir = comp.workingDir;
      if (dir === undefined) return comp;
      return {
        ...comp,
        workingDir: abs(dir),
        environments: comp.environments.map((e) =>
          e.workingDir ? { ...e, workingDir: resolve(abs(dir), e.workingDir) } : e,
        ),
      };
    }),
    sources: { ...c.sources, dir: c.sources.dir ? abs(c.sources.dir) : resolve(abs(c.dataDir), 'git') },
    providerMirrors: (
      c.providerMirrors ?? (given.accept['provider-mirror'] ? [given.accept['provider-mirror'].dir] : [])
    ).map(abs),
    releases: { ...c.releases, dir: abs(c.releases.dir) },
    publications,
    ...(c.bundles ? { bundles: publications } : {}),
  };
}

/** Whether a `fileProblems` line is about a component's working directory (not fatal at start). */
export function isWorkingDirProblem(problem: string): boolean {
  return /^components\[\d+\]\.(?:environments\[\d+\]\.)?workingDir: /.test(problem);
}

/** Files and directories the config points at that are missing or of the wrong kind, by key path. */
export function fileProblems(c: AgentConfig): string[] {
  const problems: string[] = [];
  const need = (path: string, file: string, what: string, dir = false) => {
    if (!existsSync(file)) problems.push(`${path}: ${what} "${file}" does not exist`);
    else if (dir !== statSync(file).isDirectory())
      problems.push(`${path}: "${file}" is not a ${dir ? 'directory' : 'file'}`);
  };
  need('hubPublicKeyFile', c.hubPublicKeyFile, 'hub public key file');
  c.upstreams.forEach((u, i) => {
    need(`upstreams[${i}].tokenFile`, u.tokenFile, 'token file');
  });
  c.components.forEach((comp, i) => {
    if (comp.workingDir !== undefined)
      need(`components[${i}].workingDir`, comp.workingDir, 'working directory', true);
    comp.environments.forEach((e, j) => {
      if (e.workingDir)
        need(`components[${i}].environments[${j}].workingDir`, e.workingDir, 'working directory', true);
    });
  });
  return problems;
}

/** Validates config text (YAML). `base` resolves relative paths. Does not touch the file system. */
export function parseConfig(text: string, base: string, file = '(file)'): LoadConfigResult {
  const y = parseYamlText(text, file);
  if (!y.ok) return y;
  const parsed = checkConfig(AgentConfigSchema, y.raw);
  if (!parsed.ok) return parsed;
  const both = renamedKeyProblem(y.raw, PUBLICATIONS_KEY);
  if (both) return { ok: false, problems: [both] };
  return { ok: true, config: absolutise(parsed.value, base) };
}

/**
 * Reads and validates the config file. Problems name the key path and what to fix; files the config
 * points at (key, tokens) must exist unless `checkFiles` is false; a missing working directory is not
 * a problem here (it fails that component's runs alone).
 */
export function loadConfig(path: string, opts: { checkFiles?: boolean } = {}): LoadConfigResult {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    return {
      ok: false,
      problems: [
        `${path}: cannot read the file (${(e as NodeJS.ErrnoException).code ?? String(e)}); check the path given to --config`,
      ],
    };
  }
  const r = parseConfig(text, dirname(resolve(path)), path);
  if (!r.ok || opts.checkFiles === false) return r;
  // A missing working directory fails that component's runs alone (`working directory … does not
  // exist`), never the whole agent: `config check` and the start-up log still say so.
  const problems = fileProblems(r.config).filter((p) => !isWorkingDirProblem(p));
  return problems.length ? { ok: false, problems } : r;
}

/**
 * Defaults and settings that leave a function off (O3 in docs/architecture.md#invariants): the daemon logs each at start and
 * `config check` prints them. None is an error.
 */
export function configWarnings(c: AgentConfig): string[] {
  const warnings: string[] = [];
  if (c.bundles) warnings.push(renamedKeyWarning(PUBLICATIONS_KEY));
  if (Object.keys(c.publications.accept).length === 0)
    warnings.push(
      `publications.accept: no kind is accepted, so every file headquarters publishes for ${c.site} is refused (and reported); list the kinds this site takes (provider-mirror, module, image, config, file) and their directories`,
    );
  return warnings;
}
