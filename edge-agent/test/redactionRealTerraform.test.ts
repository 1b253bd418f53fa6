import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliDecompressSync, gunzipSync, inflateRawSync } from 'node:zlib';
import * as A from '@automerge/automerge';
import {
  AgentDocSchema,
  decodeEnrolment,
  exportPublicKeyPem,
  plainAgentDoc,
  publicKeyFromText,
} from '@driftline/protocol';
import { afterAll, expect, it } from 'vitest';
import { loadSiteKey } from '../src/adapters/fs/siteKey.js';
import { CUSTOM_MESSAGE_DROPPED } from '../src/core/plan/diagnostics.js';
import { hmacFingerprint } from '../src/core/redact/maskValues.js';
import { describeRealTerraform } from './helpers/realTerraform.js';
import { tempDir } from './helpers/storeFixtures.js';
import { TestHub } from './helpers/testHub.js';

const bin = fileURLToPath(new URL('../bin/edge-agent.js', import.meta.url));

/**
 * One canary per way a variable's value reached an address on plans the scan had not seen (issue 31),
 * and three values only the configuration knows, in author-written error messages. None was marked
 * sensitive. Each has a distinctive core, looked for case-insensitively after the escapes and invisible
 * characters a key may carry are removed.
 */
const KEYED = {
  verbatim: 'CanVerbatimQz71',
  embedded: 'CanEmbeddedWx82',
  lowered: 'CanLoweredRt93',
  quoted: 'CanQuotedYu14',
  escaped: 'CanEscapedIo25',
  tab: 'CanTabbedPa36',
  zerowidth: 'CanZeroWidthSd47',
  moved: 'CanMovedFg58',
  nested: 'CanNestedHj69',
} as const;
const PIN = '739145620771';
const FAILING = {
  validation: 'CanValidKl70',
  precondition: 'CanPrecondZx81',
  file: 'CanFileCv92',
};
const CORES = [...Object.values(KEYED), PIN, ...Object.values(FAILING)].map((c) => c.toLowerCase());

const MASKED_TF = `
variable "verbatim" { default = "${KEYED.verbatim}" }
variable "embedded" { default = "${KEYED.embedded}" }
variable "lowered" { default = "${KEYED.lowered}" }
variable "quoted" { default = "${KEYED.quoted}" }
variable "escaped" { default = "${KEYED.escaped}\\\\x" }
variable "tabbed" { default = "${KEYED.tab.slice(0, 6)}\\t${KEYED.tab.slice(6)}" }
variable "zerowidth" { default = "${KEYED.zerowidth}" }
variable "moved" { default = "${KEYED.moved}" }
variable "nested" { default = "${KEYED.nested}" }
variable "pin" {
  type    = number
  default = ${PIN}
}
variable "region" { default = "eu-west-1" }

resource "terraform_data" "verbatim" {
  for_each = toset([var.verbatim])
  input    = each.key
}
resource "terraform_data" "embedded" {
  for_each = toset(["user-\${var.embedded}"])
}
resource "terraform_data" "lowered" {
  for_each = toset([lower(var.lowered)])
}
resource "terraform_data" "quoted" {
  for_each = toset(["\\"\${var.quoted}\\""])
}
resource "terraform_data" "escaped" {
  for_each = toset([var.escaped])
}
resource "terraform_data" "tabbed" {
  for_each = toset([var.tabbed])
}
resource "terraform_data" "zerowidth" {
  for_each = toset(["\${substr(var.zerowidth, 0, 7)}\\u200b\${substr(var.zerowidth, 7, -1)}"])
}
resource "terraform_data" "pin" {
  for_each = toset(["pin-\${var.pin}"])
}
resource "terraform_data" "region" {
  for_each = toset([var.region])
}
module "site" {
  source   = "./mod"
  for_each = toset(["a-\${var.nested}"])
  key      = each.key
}
`;
const MOD_TF = `
variable "key" { type = string }
module "inner" {
  source   = "./inner"
  for_each = toset(["in-\${var.key}"])
}
`;
const INNER_TF = `resource "terraform_data" "leaf" {}\n`;
const OLD_TF = `
variable "moved" { default = "${KEYED.moved}" }
resource "terraform_data" "old" {
  for_each = toset([var.moved])
}
`;
const MOVED_TF = `
resource "terraform_data" "renamed" {
  for_each = toset([var.moved])
}
moved {
  from = terraform_data.old
  to   = terraform_data.renamed
}
`;

const FAILING_TF = `
variable "admin_name" {
  type    = string
  default = "${FAILING.validation}"
  validation {
    condition     = length(var.admin_name) < 5
    error_message = "Admin name \${var.admin_name} is too long."
  }
}
variable "other" { default = "${FAILING.precondition}" }
locals {
  pw = file("\${path.module}/pw.txt")
}
resource "terraform_data" "a" {
  lifecycle {
    precondition {
      condition     = length(var.other) < 5
      error_message = "Other \${var.other} is bad."
    }
  }
}
resource "terraform_data" "b" {
  lifecycle {
    precondition {
      condition     = length(local.pw) > 40
      error_message = "Admin password \${local.pw} is too short."
    }
  }
}
`;

const tfEnv = { ...process.env, CHECKPOINT_DISABLE: '1', TF_IN_AUTOMATION: '1' };
const tf = (cwd: string, ...args: string[]) =>
  execFileSync('terraform', args, { cwd, env: tfEnv, stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });

/** Text to search: lower-cased, without the escapes and invisible characters a key can carry. */
function searchable(text: string): string {
  return text.replaceAll(/\\u200b|\\t|\\\\|\\"|\u200b|\t|"/gi, '').toLowerCase();
}

/** Bytes as text, and inflated when they are compressed (bundles, blobs, Automerge chunks). */
function bytesText(b: Uint8Array): string {
  const out = [Buffer.from(b).toString('latin1')];
  for (const f of [brotliDecompressSync, gunzipSync, inflateRawSync]) {
    try {
      out.push(f(b, { maxOutputLength: 64 * 1024 * 1024 }).toString('utf8'));
    } catch {
      // not in this format
    }
  }
  return out.join('\n');
}

function leaked(where: string, text: string): string[] {
  const s = searchable(text);
  return CORES.filter((c) => s.includes(c)).map((c) => `${c} in ${where}`);
}

let hub: TestHub | undefined;
afterAll(() => hub?.close());

describeRealTerraform('variable values masked and author messages dropped on the real binary', () => {
  it('lets no canary reach the hub, the status output, the logs or the SQLite file', {
    timeout: 300_000,
  }, async () => {
    const dir = tempDir();
    const masked = join(dir, 'masked');
    const failing = join(dir, 'failing');
    mkdirSync(join(masked, 'mod', 'inner'), { recursive: true });
    mkdirSync(failing);
    // State holding terraform_data.old["<moved>"], so the plan has a previous_address.
    writeFileSync(join(masked, 'main.tf'), OLD_TF);
    tf(masked, 'init', '-input=false', '-no-color');
    tf(masked, 'apply', '-auto-approve', '-input=false', '-no-color');
    writeFileSync(join(masked, 'main.tf'), MASKED_TF + MOVED_TF);
    writeFileSync(join(masked, 'mod', 'main.tf'), MOD_TF);
    writeFileSync(join(masked, 'mod', 'inner', 'main.tf'), INNER_TF);
    tf(masked, 'init', '-input=false', '-no-color');
    writeFileSync(join(failing, 'main.tf'), FAILING_TF);
    writeFileSync(join(failing, 'pw.txt'), FAILING.file);
    tf(failing, 'init', '-input=false', '-no-color');

    writeFileSync(join(dir, 'token'), 'agent-token\n');
    const config = join(dir, 'agent.yaml');
    const yaml = (hubUrl: string) => `
site: ship-7
agent: a1
dataDir: ./data
hubPublicKeyFile: ./hub.pub
upstreams: [{ url: "${hubUrl}", tokenFile: ./token }]
redaction: { publicVariables: [region] }
components:
  - name: masked
    workingDir: ./masked
    environments: [prod]
    schedule: "*/5 * * * * *"
  - name: failing
    workingDir: ./failing
    environments: [prod]
    schedule: "*/5 * * * * *"
sync: { intervalS: 1, jitterS: 0, recordWindowS: 0 }
`;
    writeFileSync(config, yaml('http://127.0.0.1:9'));
    const cli = (args: string[]) =>
      spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', env: { ...tfEnv, LOG_LEVEL: 'info' } });
    const init = cli(['init', '--config', config]);
    expect(init.status, init.stderr).toBe(0);
    const enrolment = await decodeEnrolment(init.stdout.trim().split(' ').at(-1) as string);
    if (!enrolment.ok) throw new Error(enrolment.error);
    hub = await TestHub.start(await publicKeyFromText(enrolment.value.key));
    writeFileSync(join(dir, 'hub.pub'), await exportPublicKeyPem(hub.keys.publicKey));
    writeFileSync(config, yaml(hub.url));

    const agent = spawn(process.execPath, [bin, 'run', '--config', config], {
      env: { ...tfEnv, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let logs = '';
    agent.stderr.on('data', (d: Buffer) => {
      logs += d.toString();
    });
    agent.stdout.on('data', (d: Buffer) => {
      logs += d.toString();
    });
    type Run = { component: string; summary: Record<string, unknown> };
    let runs: Run[] = [];
    const exited = new Promise<number | null>((r) => agent.once('exit', (c) => r(c)));
    const th = hub;
    try {
      // read again after every exchange the hub answers
      runs = await th.served<Run[]>(
        'the hub to hold a run of each component, the masked one confirmed',
        async () => {
          await th.processArrivals();
          const docs = [...th.replicas.values()].map((d) => AgentDocSchema.parse(plainAgentDoc(A.toJS(d))));
          const all = docs.flatMap((d) => Object.values(d.runs) as Run[]);
          const detailArrived = [...th.backend.blobData.values()].some((b) =>
            bytesText(b.bytes).includes('terraform_data.verbatim'),
          );
          // A later plan of the same code confirms the run instead of making a new one: the same masked
          // addresses (the same tags under the site key) and so the same plan hash.
          const confirmed = docs.some((d) =>
            Object.values(d.cells).some((c) => c.component === 'masked' && c.confirmations >= 1),
          );
          return detailArrived &&
            confirmed &&
            ['masked', 'failing'].every((c) => all.some((r) => r.component === c))
            ? all
            : false;
        },
        exited,
      );
    } catch (e) {
      throw new Error(`${(e as Error).message}; the agent's last log lines:\n${logs.slice(-4000)}`);
    } finally {
      agent.kill('SIGTERM');
    }
    expect(await exited, logs).toBe(0);

    // What the hub holds: masked addresses, the public variable's value, no author text.
    const m = runs.find((r) => r.component === 'masked')!.summary;
    expect(m, logs).toMatchObject({ status: 'changes', redactionPolicy: '2' });
    // The addresses travel in the run's detail blob.
    const detail = [...hub.backend.blobData.values()].map((b) => bytesText(b.bytes)).join('\n');
    expect(detail).toContain('terraform_data.region[\\"eu-west-1\\"]');
    for (const re of [
      /terraform_data\.embedded\[\\"user-\u27E8embedded:[0-9a-f]{6}\u27E9\\"\]/,
      /terraform_data\.old\[\\"\u27E8moved:[0-9a-f]{6}\u27E9\\"\]/,
      /module\.site\[\\"a-\u27E8nested:[0-9a-f]{6}\u27E9\\"\]\.module\.inner\[\\"in-a-\u27E8nested:[0-9a-f]{6}\u27E9\\"\]\.terraform_data\.leaf/,
      /terraform_data\.pin\[\\"pin-\u27E8pin:[0-9a-f]{6}\u27E9\\"\]/,
    ])
      expect(detail).toMatch(re);
    // The tag is the HMAC under this site's own key, so it stays the same across restarts.
    const tag = hmacFingerprint(loadSiteKey(join(dir, 'data')))(KEYED.embedded);
    expect(detail).toContain(`terraform_data.embedded[\\"user-\u27E8embedded:${tag}\u27E9\\"]`);
    const f = runs.find((r) => r.component === 'failing')!.summary;
    expect(f).toMatchObject({ status: 'failed', redactionPolicy: '2' });
    expect(f.errorExcerpt).toContain('Resource precondition failed');
    expect(f.errorExcerpt).toContain(CUSTOM_MESSAGE_DROPPED);

    // Nowhere the agent prints or stores, nowhere the hub receives.
    const found: string[] = [];
    for (const doc of hub.replicas.values())
      found.push(...leaked('hub replica', JSON.stringify(A.toJS(doc))));
    for (const [id, bytes] of hub.backend.stored) found.push(...leaked(`bundle ${id}`, bytesText(bytes)));
    for (const [sha, b] of hub.backend.blobData) found.push(...leaked(`blob ${sha}`, bytesText(b.bytes)));
    for (const args of [['status'], ['status', '--json']]) {
      const s = cli([...args, '--config', config]);
      expect(s.status, s.stderr).toBe(0);
      found.push(...leaked(`${args.join(' ')} output`, s.stdout + s.stderr));
    }
    found.push(...leaked('agent logs', logs));
    for (const file of ['agent.sqlite', 'agent.sqlite-wal']) {
      const path = join(dir, 'data', file);
      if (existsSync(path)) found.push(...leaked(file, bytesText(readFileSync(path))));
    }
    expect(found).toEqual([]);
  });
});
