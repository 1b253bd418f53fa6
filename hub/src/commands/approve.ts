import { readFile } from 'node:fs/promises';
import {
  ApprovalJourneySchema,
  approvalClaimsFor,
  importPrivateKeyPem,
  parseCliDuration,
  publicKeyOf,
  RunDetailSchema,
  signApproval,
} from '@driftline/protocol';
import type { Command } from 'commander';
import { remoteAction, remoteHub, remoteOptions } from './remote.js';

/**
 * `hub approve`: signs an approval of one run's saved plan with the approver's own key, on this
 * machine, and submits it to the hub, which relays it to the site. The private key never leaves here.
 */
export function addApproveVerb(program: Command): void {
  remoteOptions(
    program
      .command('approve')
      .description(
        "approve applying one run's saved plan at its site: signs here with your approver key, the hub relays it",
      )
      .requiredOption('--key <file>', 'your approver private key (PKCS#8 PEM, from hub approver keygen)')
      .requiredOption('--run <runId>', 'the plan run to apply (its saved plan file is what gets applied)')
      .option('--expires <duration>', 'the approval is void after this long: 30m, 24h, 2d', '24h')
      .option('--json', 'machine-readable output'),
  )
    .addHelpText(
      'after',
      `
The token needs the approver role (hub user add ada --role approver); the site's agent applies only if
your public key is pinned in its apply.approvers and the run is still the cell's latest plan.

Example:
  hub approve --key ~/.driftline/approver.pem --run 01JZ6Q3T8K9V2M4N5P6R7S8T9V --expires 24h \\
    --hub https://hq.example.org:8080 --token-file ~/.driftline/approver.token`,
    )
    .exitOverride()
    .action((o) => remoteAction('approve', () => approve(o)));
}

async function approve(o: {
  key: string;
  run: string;
  expires: string;
  json?: boolean;
  hub?: string;
  tokenFile?: string;
}): Promise<number> {
  const ttl = parseCliDuration(o.expires);
  if (ttl === null) throw new Error(`--expires ${o.expires}: a duration such as 30m, 24h or 2d`);
  let pem: string;
  try {
    pem = await readFile(o.key, 'utf8');
  } catch (e) {
    throw new Error(`cannot read --key ${o.key}: ${(e as Error).message}`);
  }
  const privateKey = await importPrivateKeyPem(pem);
  const hub = remoteHub(o);
  const run = await hub.json('GET', `/api/runs/${encodeURIComponent(o.run)}`, RunDetailSchema);
  const built = approvalClaimsFor(run, { now: Date.now(), lifetimeMs: ttl });
  if (!built.ok)
    throw new Error(
      built.problem === 'no-plan-file'
        ? `run ${run.runId} kept no saved plan file: apply is not enabled for ${run.environment}/${run.component} at ${run.site}`
        : `run ${run.runId} names no full commit id: only a plan of a known commit can be approved`,
    );
  const { claims } = built;
  const sha = claims.planFileSha256;
  const approval = await signApproval(claims, privateKey, await publicKeyOf(privateKey));
  const journey = await hub.json('POST', '/api/approvals', ApprovalJourneySchema, approval);
  if (o.json) console.log(JSON.stringify(journey));
  else
    console.log(
      `approved ${run.site} ${run.environment}/${run.component} run ${run.runId} (plan file ${sha.slice(0, 12)}…) as ${journey.approverName ?? approval.approver}\n` +
        `approval ${journey.approvalId} ${journey.state}; expires ${journey.expiresAt}`,
    );
  return 0;
}
