import { seededRandom } from '../rng.js';
import { box } from './messages.js';
import { type Outcome, PLAN_FILE_MARK } from './run.js';
import { hex } from './secrets.js';

/** What the fake writes into a saved plan besides the plan JSON: enough for `apply` to act like Terraform. */
export interface SavedPlanFacts {
  /** The state serial the plan was made against: `apply` refuses it once the state moved on. */
  serial: number;
  /** The scenario step's state (`apply-error` plans fine and fails mid-apply). */
  state: string;
  /** Which step instance the plan belongs to (see `stepInstance`): plans after an apply of it are clean. */
  instance: number;
}

/** The fake's own state: its serial, and which step instance was applied last. */
export interface FakeState {
  serial: number;
  appliedInstance?: number;
}

interface SavedPlan extends SavedPlanFacts {
  plan: { resource_changes?: Array<{ address?: string; change?: { actions?: string[] } }> };
}

function readSaved(content: string | null): SavedPlan | null {
  try {
    const parsed = content === null ? null : JSON.parse(content);
    if (parsed?.[PLAN_FILE_MARK] !== 1 || typeof parsed.serial !== 'number') return null;
    return parsed as SavedPlan;
  } catch {
    return null;
  }
}

/** Terraform's words for each action of a resource change, as `apply` prints them. */
const VERBS: Record<string, [string, string]> = {
  create: ['Creating...', 'Creation complete'],
  update: ['Modifying...', 'Modifications complete'],
  delete: ['Destroying...', 'Destruction complete'],
};

const GERUND: Record<string, string> = { create: 'creating', update: 'updating', delete: 'deleting' };

/** `module.db.aws_db_instance.main["a"]` → `aws_db_instance`. */
const typeOf = (address: string) => /([a-z0-9_]+)\.[^.[]+(\[[^\]]*\])?$/.exec(address)?.[1] ?? 'resource';

/**
 * `terraform apply <planfile>`: refuses a file that is not a saved plan and a stale one (the state serial
 * moved since the plan: Terraform's "Saved plan is stale"); fails part-way through for an `apply-error`
 * plan or `mode: error`; otherwise applies, bumps the serial and says what it did as Terraform does. A
 * failed apply bumps the serial too: what was created before the error is in the state.
 */
export function applyOutcome(p: {
  file: string;
  content: string | null;
  state: FakeState;
  /** `error`: fail mid-apply whatever the plan (FAKE_TERRAFORM_APPLY=error). */
  mode?: string;
  seed: number;
}): Outcome & { nextState?: FakeState } {
  const saved = readSaved(p.content);
  if (!saved) {
    const why =
      p.content === null ? `stat ${p.file}: no such file or directory` : 'zip: not a valid zip file';
    return {
      exitCode: 1,
      stdout: '',
      stderr: box(`Failed to load "${p.file}" as a plan file`, [`Error: ${why}`]),
    };
  }
  if (saved.serial !== p.state.serial)
    return {
      exitCode: 1,
      stdout: '',
      stderr: box('Saved plan is stale', [
        'The given plan file can no longer be applied because the state was changed',
        'by another operation after the plan was created.',
      ]),
    };
  const changes = (saved.plan.resource_changes ?? []).filter((r) =>
    (r.change?.actions ?? []).some((a) => a in VERBS),
  );
  const r = seededRandom(`${p.seed}/apply/${saved.serial}`);
  const lines: string[] = [];
  const counts = { added: 0, changed: 0, destroyed: 0 };
  const fail = p.mode === 'error' || saved.state === 'apply-error';
  const bumped: FakeState = { ...p.state, serial: p.state.serial + 1 };
  for (const [i, rc] of changes.entries()) {
    const address = rc.address ?? 'resource';
    const actions = rc.change?.actions ?? [];
    for (const a of actions.includes('delete') && actions.includes('create')
      ? ['delete', 'create']
      : actions) {
      const verb = VERBS[a];
      if (!verb) continue;
      lines.push(`${address}: ${verb[0]}`);
      if (fail && i === Math.floor(changes.length / 2)) {
        return {
          exitCode: 1,
          stdout: `${lines.join('\n')}\n`,
          stderr: box(
            `${GERUND[a]} ${typeOf(address)}: operation error: https response error StatusCode: 400`,
            [
              `RequestID: ${hex(r, 8)}-${hex(r, 4)}-${hex(r, 4)}-${hex(r, 4)}-${hex(r, 12)},`,
              'api error InsufficientInstanceCapacity: there is not enough capacity for the requested resources',
              '',
              `  with ${address},`,
            ],
          ),
          nextState: bumped,
        };
      }
      lines.push(
        `${address}: ${verb[1]} after ${1 + (i % 5)}s${a === 'delete' ? '' : ` [id=${hex(r, 12)}]`}`,
      );
      if (a === 'create') counts.added++;
      else if (a === 'update') counts.changed++;
      else counts.destroyed++;
    }
  }
  lines.push(
    '',
    `Apply complete! Resources: ${counts.added} added, ${counts.changed} changed, ${counts.destroyed} destroyed.`,
  );
  return {
    exitCode: 0,
    stdout: `${lines.join('\n')}\n`,
    stderr: '',
    nextState: { serial: p.state.serial + 1, appliedInstance: saved.instance },
  };
}
