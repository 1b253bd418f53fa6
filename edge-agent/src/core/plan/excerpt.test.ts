import { describe, expect, it } from 'vitest';
import { fixtureText } from '../../../test/fixtures.js';
import { BUILTIN_RULES } from '../redact/rules.js';
import type { SecretValue } from '../redact/scan.js';
import { CUSTOM_MESSAGE_DROPPED } from './diagnostics.js';
import { buildErrorExcerpt, withheldExcerpt } from './excerpt.js';
import { stripQuoted, valueFreeLine } from './excerptLines.js';

const SECRET = 'Vault-Pa55word-q7Zr';
/** A secret the line allow-list cannot recognise by its shape (letters only): only the scan can. */
const WORDS = 'correct-horse-battery-staple';
const known: SecretValue[] = [
  { value: SECRET, source: 'var-file' },
  { value: WORDS, source: 'var-file' },
];

/** What Terraform prints when a -var-file value fails a validation rule. */
const VALIDATION_STDERR = `
Planning failed. Terraform encountered an error while generating this plan.

╷
│ Error: Invalid value for variable
│ 
│   on staging.tfvars line 3:
│    3: db_password = "${SECRET}"
│     ├────────────────
│     │ var.db_password is "${SECRET}"
│ 
│ The database password must be at least 24 characters.
│ 
│ This was checked by the validation rule at variables.tf:4,3-13.
╵
`;

const diagnostic = (detail: string) =>
  JSON.stringify({
    '@level': 'error',
    '@message': `Error: Invalid value for variable`,
    '@module': 'terraform.ui',
    diagnostic: {
      severity: 'error',
      summary: 'Invalid value for variable',
      detail,
      range: {
        filename: 'staging.tfvars',
        start: { line: 3, column: 15, byte: 40 },
        end: { line: 3, column: 36, byte: 61 },
      },
      snippet: {
        context: null,
        code: `db_password = "${SECRET}"`,
        start_line: 3,
        highlight_start_offset: 14,
        highlight_end_offset: 35,
        values: [{ traversal: 'var.db_password', statement: `is "${SECRET}"` }],
      },
    },
    type: 'diagnostic',
  });

/** The author-written text kept: what these tests check is the line allow-list and the scan on it. */
const KEEP = { keepCustomMessages: true };

describe('buildErrorExcerpt', () => {
  it('keeps what a validation failure says and drops the lines that quote the value', () => {
    const r = buildErrorExcerpt({ stderr: VALIDATION_STDERR }, [], BUILTIN_RULES, KEEP);
    expect(r.excerpt).toBe(
      [
        'Planning failed. Terraform encountered an error while generating this plan.',
        ' Error: Invalid value for variable',
        '   on staging.tfvars line 3:',
        ' The database password must be at least 24 characters.',
        ' This was checked by the validation rule at variables.tf:4,3-13.',
      ].join('\n'),
    );
    expect(r.excerpt).not.toContain(SECRET);
  });

  it('builds the excerpt from -json diagnostics: severity, summary, range, detail without quoted values', () => {
    const stdout = [
      '{"@level":"info","@message":"Terraform 1.9.8","type":"version","terraform":"1.9.8","ui":"1.2"}',
      diagnostic(
        `The value "${SECRET}" is too short.\n\nThis was checked by the validation rule at variables.tf:4,3-13.`,
      ),
    ].join('\n');
    const r = buildErrorExcerpt({ stdout, stderr: '' }, known, BUILTIN_RULES, KEEP);
    expect(r).toEqual({
      excerpt: [
        'Error: Invalid value for variable',
        '  on staging.tfvars line 3',
        '  The value … is too short.',
        '  This was checked by the validation rule at variables.tf:4,3-13.',
      ].join('\n'),
    });
  });

  it('withholds the excerpt, naming the rule, when an allowed line still carries a known value', () => {
    const stdout = diagnostic(`The password ${WORDS} is too short.`);
    expect(buildErrorExcerpt({ stdout, stderr: '' }, known, BUILTIN_RULES, KEEP)).toEqual({
      excerpt: withheldExcerpt('known-value-var-file'),
      withheld: 'known-value-var-file',
    });
    const plain = `Error: Invalid value for variable\nThe password ${WORDS.toUpperCase()} is too short.\n`;
    expect(buildErrorExcerpt({ stderr: plain }, known, BUILTIN_RULES, KEEP).withheld).toBe(
      'known-value-var-file',
    );
  });

  it('scans everything before cutting, so no part of a secret leaves through the cut', () => {
    const secretLine = `Error: the password ${WORDS} was refused`;
    const filler = Array.from({ length: 20 }, (_, i) => `Warning: line number ${i} says nothing much at all`);
    const r = buildErrorExcerpt({ stderr: [secretLine, ...filler].join('\n') }, known, BUILTIN_RULES);
    expect(r.withheld).toBe('known-value-var-file');
    const long = Array.from({ length: 12 }, () => `Error: ${'word '.repeat(50)}`.trim());
    const cut = buildErrorExcerpt({ stderr: long.join('\n') }, [], BUILTIN_RULES);
    expect(cut.excerpt?.length).toBeLessThanOrEqual(1000);
    expect(cut.excerpt?.split('\n').every((l) => l === long[0])).toBe(true);
  });
});

describe('buildErrorExcerpt: author-written messages (decision 210)', () => {
  /** A value the agent cannot know: a default, or a file() read, interpolated into error_message. */
  const CANARY = 'pw-FileCanary-771';
  const custom = (summary: string, detail = `Admin password ${CANARY} is too short.`) =>
    JSON.stringify({
      type: 'diagnostic',
      diagnostic: {
        severity: 'error',
        summary,
        detail,
        range: { filename: 'main.tf', start: { line: 20, column: 5, byte: 300 } },
      },
    });

  it.each([
    'Invalid value for variable',
    'Resource precondition failed',
    'Resource postcondition failed',
    'Module output value precondition failed',
    'Check block assertion failed',
  ])('keeps the summary and range of %s and drops its author-written detail', (summary) => {
    const r = buildErrorExcerpt({ stdout: custom(summary), stderr: '' }, [], BUILTIN_RULES);
    expect(r).toEqual({
      excerpt: [`Error: ${summary}`, '  on main.tf line 20', `  ${CUSTOM_MESSAGE_DROPPED}`].join('\n'),
    });
  });

  it('keeps the detail of other diagnostics, and the author text when keepCustomMessages is set', () => {
    const other = buildErrorExcerpt(
      { stdout: custom('Unsupported argument', 'Admin password is too short.'), stderr: '' },
      [],
      BUILTIN_RULES,
    );
    expect(other.excerpt).toContain('Admin password');
    const kept = buildErrorExcerpt(
      { stdout: custom('Resource precondition failed', 'Admin password is too short.'), stderr: '' },
      [],
      BUILTIN_RULES,
      KEEP,
    );
    expect(kept.excerpt).toContain('Admin password');
  });

  it('drops the author text from plain output too, up to the box edge, and keeps what follows', () => {
    const stderr = [
      '╷',
      '│ Error: Resource precondition failed',
      '│',
      '│   on main.tf line 20, in resource "terraform_data" "b":',
      '│   20:       condition     = length(local.pw) > 40',
      '│',
      `│ Admin password ${CANARY} is too short.`,
      '╵',
      '╷',
      '│ Error: Unsupported argument',
      '│',
      '│ An argument named nope is not expected here.',
      '╵',
    ].join('\n');
    const r = buildErrorExcerpt({ stderr }, [], BUILTIN_RULES);
    expect(r.excerpt).not.toContain(CANARY);
    expect(r.excerpt?.split('\n')).toEqual([
      ' Error: Resource precondition failed',
      ` ${CUSTOM_MESSAGE_DROPPED}`,
      ' Error: Unsupported argument',
      ' An argument named nope is not expected here.',
    ]);
  });
});

describe('valueFreeLine', () => {
  it.each([
    'Error: Invalid value for variable',
    'on staging.tfvars line 3:',
    'This was checked by the validation rule at variables.tf:4,3-13.',
    'Error: Error acquiring the state lock',
    "Error message: can't reach DynamoDB: ConditionalCheckFailedException",
    'Lock Info:',
    'again. For most commands, you can disable locking with the "-lock=false"',
  ])('keeps %s', (line) => {
    expect(valueFreeLine(line)).toBe(true);
  });

  it.each([
    'var.db_password is "hunter2"',
    'var.pin is 48213907',
    'each.value is map of string with 3 elements',
    '3: db_password = hunter2',
    "db_password = 'x'",
    '├────────────────',
    'ID:        9a1b-lock-0042',
    'Who:       ops@bastion',
    'Path: driftline-state/prod/network/terraform.tfstate',
    'api error: credentials AKIAIOSFODNN7EXAMPLE are not authorized',
    'Post https://user:pw@example.com/',
    'x'.repeat(301),
  ])('drops %s', (line) => {
    expect(valueFreeLine(line)).toBe(false);
  });
});

describe('buildErrorExcerpt: a state lock (decision 555)', () => {
  /** Terraform 1.11.4's own output while another process held the lock (test/fixtures/terraform-lock). */
  const PLAIN = fixtureText('terraform-lock/plan.stderr');
  const JSON_LINES = fixtureText('terraform-lock/plan-json.stdout');
  const ID = '5ba24658-9d93-e5d5-231e-bf92254a663e';
  const LOCK = {
    id: ID,
    path: 'terraform.tfstate',
    operation: 'OperationTypeInvalid',
    who: 'root@vm',
    version: '1.11.4',
    created: '2026-12-02 16:46:18.137954996 +0000 UTC',
  };
  const lockLines = (indent: string) =>
    [
      `ID:        ${ID}`,
      'Path:      terraform.tfstate',
      'Operation: OperationTypeInvalid',
      'Who:       root@vm',
      'Version:   1.11.4',
      'Created:   2026-12-02 16:46:18.137954996 +0000 UTC',
      'Info:',
    ].map((l) => indent + l);
  const advice = (indent: string) =>
    [
      'Terraform acquires a state lock to protect the state from being written',
      'by multiple users at the same time. Please resolve the issue above and try',
      'again. For most commands, you can disable locking with the "-lock=false"',
      'flag, but this is not recommended.',
    ].map((l) => indent + l);

  it("keeps Terraform's Lock Info and its -lock=false advice from plain output, and returns the lock", () => {
    const r = buildErrorExcerpt({ stderr: PLAIN }, known, BUILTIN_RULES);
    expect(r.excerpt?.split('\n')).toEqual([
      'Error: Error acquiring the state lock',
      'Error message: resource temporarily unavailable',
      'Lock Info:',
      ...lockLines('  '),
      ...advice(''),
    ]);
    expect(r.lock).toEqual(LOCK);
    expect(r.withheld).toBeUndefined();
  });

  it('keeps the same from -json diagnostics, -lock=false as written rather than …', () => {
    const r = buildErrorExcerpt({ stdout: JSON_LINES, stderr: '' }, known, BUILTIN_RULES);
    expect(r.excerpt?.split('\n')).toEqual([
      'Error: Error acquiring the state lock',
      '  Error message: resource temporarily unavailable',
      '  Lock Info:',
      ...lockLines('    '),
      ...advice('  '),
    ]);
    expect(r.excerpt).not.toContain('…');
    expect(r.lock).toEqual(LOCK);
  });

  it('withholds a lock value that carries a secret, naming the rule, and keeps the other fields', () => {
    const stderr = PLAIN.replace('root@vm', `deploy@${SECRET}`).replace(
      /Info: {6}$/m,
      'Info:      AKIAIOSFODNN7EXAMPLE',
    );
    const r = buildErrorExcerpt({ stderr }, known, BUILTIN_RULES);
    expect(r.excerpt).not.toContain(SECRET);
    expect(r.excerpt).not.toContain('AKIAIOSFODNN7EXAMPLE');
    expect(r.excerpt).toContain(
      '  Who:       (withheld: it matched the redaction rule known-value-var-file)',
    );
    expect(r.excerpt).toContain('  Info:      (withheld: it matched the redaction rule aws-access-key-id)');
    expect(r.lockWithheld).toEqual(['known-value-var-file', 'aws-access-key-id']);
    const { who: _w, ...rest } = LOCK;
    expect(r.lock).toEqual(rest);
  });

  it('keeps no field line away from a Lock Info heading, of another name, repeated, or with a long value', () => {
    const stderr = [
      'Error: Error acquiring the state lock',
      `ID:        ${ID}`,
      'Lock Info:',
      `  ID:        ${ID}`,
      '  Token:     abc-123-def',
      '  Who:       ops@bastion',
      'Lock Info:',
      `  Path:      ${'a1/'.repeat(67)}`,
      '  Who:       ops@bastion',
      'Lock Info:',
      '  Who:       ops@bastion',
      '  Who:       root@elsewhere',
    ].join('\n');
    const r = buildErrorExcerpt({ stderr }, [], BUILTIN_RULES);
    expect(r.excerpt?.split('\n')).toEqual([
      'Error: Error acquiring the state lock',
      'Lock Info:',
      `  ID:        ${ID}`,
      'Lock Info:',
      'Lock Info:',
      '  Who:       ops@bastion',
    ]);
    expect(r.lock).toEqual({ id: ID });
  });

  it('reads no lock from an author-written block it drops', () => {
    const stderr = ['Error: Resource precondition failed', 'Lock Info:', `  ID:        ${ID}`, ''].join('\n');
    const r = buildErrorExcerpt({ stderr }, [], BUILTIN_RULES);
    expect(r.lock).toBeUndefined();
    expect(r.excerpt).not.toContain(ID);
  });
});

describe('stripQuoted', () => {
  it("keeps Terraform's own quoted flag and still strips quoted values", () => {
    expect(stripQuoted('disable locking with the "-lock=false" flag, not "hunter2"')).toBe(
      'disable locking with the "-lock=false" flag, not …',
    );
  });
});
