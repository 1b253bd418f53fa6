import type { PlanCounts } from './planJson.js';

/** What `terraform plan` prints on stdout (abridged, same closing lines as Terraform). */
export function planText(state: 'clean' | 'changes' | 'drift', counts: PlanCounts, out?: string): string {
  const lines: string[] = [];
  if (state === 'drift') {
    lines.push(
      '',
      'Note: Objects have changed outside of Terraform',
      '',
      `Terraform detected the following changes made outside of Terraform since the last "terraform apply" (${counts.drift} objects).`,
      '',
    );
  }
  if (state === 'changes') {
    lines.push(
      '',
      'Terraform used the selected providers to generate the following execution plan.',
      '',
      `Plan: ${counts.add} to add, ${counts.change} to change, ${counts.destroy} to destroy.`,
    );
    if (out)
      lines.push(
        '',
        `Saved the plan to: ${out}`,
        '',
        'To perform exactly these actions, run the following command to apply:',
        `    terraform apply "${out}"`,
      );
  } else {
    lines.push(
      '',
      'No changes. Your infrastructure matches the configuration.',
      '',
      'Terraform has compared your real infrastructure against your configuration and found no differences, so no changes are needed.',
    );
  }
  return `${lines.join('\n')}\n`;
}

/** Terraform's diagnostics box (stderr). */
export function box(summary: string, body: string[]): string {
  return `╷\n│ Error: ${summary}\n│ \n${body.map((l) => `│ ${l}`.trimEnd()).join('\n')}\n╵\n`;
}

/** The state-lock error, as Terraform prints it for an S3/DynamoDB backend. Deterministic per seed. */
export function lockErrorText(p: {
  lockId: string;
  path: string;
  who: string;
  version: string;
  created: string;
}): string {
  return box('Error acquiring the state lock', [
    'Error message: operation error DynamoDB: PutItem, https response error',
    'StatusCode: 400, RequestID: 4KQ3G7E1MBV0L2, ConditionalCheckFailedException:',
    'The conditional request failed',
    'Lock Info:',
    `  ID:        ${p.lockId}`,
    `  Path:      ${p.path}`,
    '  Operation: OperationTypePlan',
    `  Who:       ${p.who}`,
    `  Version:   ${p.version}`,
    `  Created:   ${p.created}`,
    '  Info:      ',
    '',
    '',
    'Terraform acquires a state lock to protect the state from being written',
    'by multiple users at the same time. Please resolve the issue above and try',
    'again. For most commands, you can disable locking with the "-lock=false"',
    'flag, but this is not recommended.',
  ]);
}

/** A provider failure during refresh; it quotes a secret, as real provider errors sometimes do. */
export function failureText(p: { region: string; accessKey: string; component: string }): string {
  return box('reading EC2 VPC: operation error EC2: DescribeVpcs, https response error StatusCode: 403', [
    `RequestID: 9f1c2e44-0b7d-4a1e-9e0c-${p.component.length.toString().padStart(12, '0')},`,
    `api error UnauthorizedOperation: credentials ${p.accessKey} are not authorized in ${p.region}`,
    '',
    '  with module.network.aws_vpc.main,',
    '  on modules/network/main.tf line 1, in resource "aws_vpc" "main":',
    '   1: resource "aws_vpc" "main" {',
  ]);
}
