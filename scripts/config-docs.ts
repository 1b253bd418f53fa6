/**
 * Writes examples/schema/{hub,relay,agent}.schema.json and docs/configuration.md from the JSON Schemas
 * the three programs print (`hub config schema`, `relay config schema`, `edge-agent config schema`),
 * so the zod schemas stay the one source of truth. It runs the programs as processes and imports none
 * of their code.
 *
 *   npx tsx scripts/config-docs.ts           write the files
 *   npx tsx scripts/config-docs.ts --check   write nothing; exit 1 naming each file that differs
 *
 * Exits 1 as well when a key has no description: every key carries a one-line meaning.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

interface Schema {
  type?: string | string[];
  description?: string;
  default?: unknown;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: Schema | boolean;
  propertyNames?: Schema;
  items?: Schema;
  anyOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minItems?: number;
}

const PROGRAMS = [
  {
    file: 'hub.yaml',
    schema: 'hub',
    bin: 'hub/bin/hub.js',
    about:
      'The hub, at headquarters: `hub run --config hub.yaml`. Environment: `HUB_WEBHOOK_SECRET`, `LOG_LEVEL`.',
  },
  {
    file: 'relay.yaml',
    schema: 'relay',
    bin: 'relay/bin/relay.js',
    about:
      'A relay, where links meet: `relay run --config relay.yaml`. Environment: `LOG_LEVEL`, and any `tokenEnv`.',
  },
  {
    file: 'agent.yaml',
    schema: 'agent',
    bin: 'edge-agent/bin/edge-agent.js',
    about: 'The edge agent, at the outpost: `edge-agent run --config agent.yaml`. Environment: `LOG_LEVEL`.',
  },
] as const;

function schemaOf(bin: string): string {
  const r = spawnSync(process.execPath, [join(ROOT, bin), 'config', 'schema'], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, LOG_LEVEL: 'silent' },
  });
  if (r.status !== 0) throw new Error(`${bin} config schema exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

const LARGEST_SAFE = Number.MAX_SAFE_INTEGER;

function typeOf(s: Schema): string {
  if (s.anyOf)
    return s.anyOf
      .map((b) => (b.properties ? `{ ${Object.keys(b.properties).join(', ')} }` : typeOf(b)))
      .join(' or ');
  if (s.enum) return s.enum.map((v) => `\`${JSON.stringify(v)}\``).join(' or ');
  if (s.const !== undefined) return `\`${JSON.stringify(s.const)}\``;
  const t = Array.isArray(s.type) ? s.type.join(' or ') : (s.type ?? 'any');
  if (t === 'array')
    return `list of ${s.items ? typeOf(s.items) : 'any'}${s.minItems ? ` (at least ${s.minItems})` : ''}`;
  if (t === 'object' && typeof s.additionalProperties === 'object') {
    const keys = s.propertyNames?.enum ? s.propertyNames.enum.join(', ') : 'name';
    return `map of ${keys} → ${typeOf(s.additionalProperties)}`;
  }
  if (t === 'string' && s.format === 'uri') return 'URL';
  if (t === 'integer' || t === 'number') {
    const bounds: string[] = [];
    if (s.exclusiveMinimum !== undefined) bounds.push(`> ${s.exclusiveMinimum}`);
    if (s.minimum !== undefined) bounds.push(`≥ ${s.minimum}`);
    if (s.maximum !== undefined && s.maximum < LARGEST_SAFE) bounds.push(`≤ ${s.maximum}`);
    return bounds.length ? `${t} ${bounds.join(', ')}` : t;
  }
  return t;
}

function defaultOf(s: Schema, required: boolean, inForm: boolean): string {
  if (required) return inForm ? '**required** in this form' : '**required**';
  if (s.default === undefined) return 'unset';
  if (typeof s.default === 'object' && s.default !== null && !Array.isArray(s.default) && s.properties)
    return '(its keys)';
  return `\`${JSON.stringify(s.default)}\``;
}

interface Row {
  key: string;
  type: string;
  default: string;
  meaning: string;
}

/** Every key under `s`, depth first; union branches and list items contribute their keys at the same path. */
function rows(s: Schema, path: string, out: Row[], undescribed: string[]): void {
  const branches = s.anyOf ?? [s];
  for (const b of branches) {
    if (b.items) rows(b.items, `${path}[]`, out, undescribed);
    if (typeof b.additionalProperties === 'object')
      rows(b.additionalProperties, `${path}.<${b.propertyNames?.enum ? 'kind' : 'name'}>`, out, undescribed);
    for (const [name, p] of Object.entries(b.properties ?? {})) {
      const key = path ? `${path}.${name}` : name;
      if (out.some((r) => r.key === key)) continue;
      if (!p.description) undescribed.push(key);
      out.push({
        key,
        type: typeOf(p),
        default: defaultOf(p, (b.required ?? []).includes(name), branches.length > 1),
        meaning: p.description ?? '',
      });
      rows(p, key, out, undescribed);
    }
  }
}

const cell = (t: string) => t.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function render(sections: { file: string; schema: string; about: string; json: Schema }[]): {
  md: string;
  undescribed: string[];
} {
  const undescribed: string[] = [];
  const parts = [
    '# Configuration',
    '',
    "<!-- Generated by `npx tsx scripts/config-docs.ts` from each program's `config schema`; edit the zod",
    '     schemas (hub/src/config.ts, relay/src/config.ts, edge-agent/src/configSchema.ts and configComponent.ts), not this file. -->',
    '',
    'Each program reads one YAML file, given with `--config`. Every relative path in it (data directories, key',
    'and token files, `uiDir`, working directories) resolves from the folder of that file, never from the',
    'directory the program was started in. Unknown keys are refused, so a typo is never silently ignored.',
    '',
    '- `hub config check -c hub.yaml`, `relay config check -c relay.yaml` and',
    '  `edge-agent config check --config agent.yaml [--online]` list every problem with its key path (exit 2)',
    '  and every warning about a function a setting leaves off (exit 0).',
    '- `hub config schema`, `relay config schema` and `edge-agent config schema` print the JSON Schema; copies',
    '  are in [examples/schema/](../examples/schema/). The examples [hub.yaml](../examples/hub.yaml),',
    '  [relay.yaml](../examples/relay.yaml) and [agent.yaml](../examples/agent.yaml) show every key with a',
    '  comment and are wired to each other (hub, one relay, one agent on 127.0.0.1). Their first line,',
    '  `# yaml-language-server: $schema=./schema/<name>.schema.json`, lets an editor with the YAML language',
    '  server validate and complete as you type.',
    '',
    'In the tables, `a.b` is key `b` inside `a`, `a[]` an item of list `a`, `<name>` any key of a map;',
    '"(its keys)" means the defaults are those of the keys below it.',
    '',
  ];
  for (const s of sections) {
    const list: Row[] = [];
    rows(s.json, '', list, undescribed);
    parts.push(`## ${s.file}`, '', s.about, '', s.json.description ?? '', '');
    parts.push(
      `Schema: [examples/schema/${s.schema}.schema.json](../examples/schema/${s.schema}.schema.json).`,
      '',
    );
    parts.push('| key | type | default | meaning |', '|---|---|---|---|');
    for (const r of list)
      parts.push(`| \`${r.key}\` | ${cell(r.type)} | ${cell(r.default)} | ${cell(r.meaning)} |`);
    parts.push('');
  }
  return { md: parts.join('\n'), undescribed: undescribed.map((k) => k) };
}

function main(check: boolean): number {
  const files = new Map<string, string>();
  const sections = PROGRAMS.map((p) => {
    const text = schemaOf(p.bin);
    files.set(`examples/schema/${p.schema}.schema.json`, text);
    return { ...p, json: JSON.parse(text) as Schema };
  });
  const { md, undescribed } = render(sections);
  files.set('docs/configuration.md', md);
  if (undescribed.length) {
    console.error(
      `keys without a description (add .describe() in the zod schema):\n  ${undescribed.join('\n  ')}`,
    );
    return 1;
  }
  const drifted: string[] = [];
  for (const [rel, text] of files) {
    const path = join(ROOT, rel);
    const now = existsSync(path) ? readFileSync(path, 'utf8') : null;
    if (now === text) continue;
    drifted.push(rel);
    if (!check) writeFileSync(path, text);
  }
  if (check && drifted.length) {
    console.error(
      `out of date with the programs' config schemas: ${drifted.join(', ')}\nregenerate with: npx tsx scripts/config-docs.ts`,
    );
    return 1;
  }
  console.log(drifted.length ? `wrote ${drifted.join(', ')}` : 'up to date');
  return 0;
}

process.exitCode = main(process.argv.includes('--check'));
