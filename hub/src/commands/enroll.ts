import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { decodeEnrolment, type Enrolment } from '@driftline/protocol';
import type { Command } from 'commander';
import { openHubStore, storeLabel } from '../adapters/openStores.js';
import type { HubConfig } from '../config.js';
import { enrol } from '../core/enrolment.js';
import { cliAudit } from '../core/users.js';

interface EnrollOptions {
  config?: string;
  json?: boolean;
  site?: string;
  agent?: string;
  key?: string;
}

const usage = (message: string): never => {
  console.error(`hub enroll: ${message}`);
  process.exit(2);
};

/** The enrolment to make, from the enrolment string or from the three flags (exits 2 when neither fits). */
async function whatToEnrol(text: string | undefined, o: EnrollOptions): Promise<Enrolment> {
  const flags = [o.site, o.agent, o.key].filter((x) => x !== undefined).length;
  if (text !== undefined && flags > 0)
    return usage('give the enrolment string or --site, --agent and --key, not both');
  if (text !== undefined) {
    if (!o.config)
      return usage(
        "--config is required with an enrolment string: the running hub's hub.yaml, so the agent lands in the store that hub reads",
      );
    const d = await decodeEnrolment(text);
    return d.ok ? d.value : usage(d.error);
  }
  if (flags === 3) return { site: o.site as string, agent: o.agent as string, key: o.key as string };
  return usage(
    'give the enrolment string `edge-agent init` printed (hub enroll --config hub.yaml dle1.…), or all of --site, --agent and --key',
  );
}

/**
 * `hub enroll`: pins an agent's public key in the hub's store, from the one-word enrolment string that
 * `edge-agent init` prints (`hub enroll --config hub.yaml dle1.…`) or from `--site/--agent/--key`.
 * Audited as `agent.enroll`.
 */
export function addEnrollVerb(program: Command, config: (o: { config?: string }) => HubConfig): void {
  program
    .command('enroll')
    .description(
      'pin an agent public key: paste the line `edge-agent init` printed (hub enroll --config hub.yaml dle1.…)',
    )
    .argument('[enrollment]', 'the enrolment string (dle1.…) `edge-agent init` printed')
    .option('-c, --config <file>', "the running hub's hub.yaml (required with an enrolment string)")
    .option('--json', 'machine-readable output')
    .option('--site <site>', 'site id (instead of the enrolment string)')
    .option('--agent <agent>', 'agent id (instead of the enrolment string)')
    .option('--key <key>', "the agent's public key, ed25519:<base64url> or PEM (instead of the string)")
    .addHelpText(
      'after',
      '\nExamples:\n  hub enroll --config hub.yaml dle1.eyJzaXRlIjoic2hpcC03Ii…\n' +
        '  hub enroll --config hub.yaml --site ship-7 --agent a1 --key ed25519:AbC…',
    )
    .exitOverride()
    .action(async (text: string | undefined, o: EnrollOptions) => {
      const e = await whatToEnrol(text, o);
      if (o.config && !existsSync(o.config))
        usage(
          `no file ${resolve(o.config)}: run this where the hub's hub.yaml is, or put its path after --config`,
        );
      const c = config(o);
      const s = await openHubStore(c);
      let r: Awaited<ReturnType<typeof enrol>>;
      try {
        r = await enrol(s, e, Date.now());
        if (r.ok) await s.commit({ audit: [cliAudit('agent.enroll', `${e.site}/${e.agent}`, Date.now())] });
      } finally {
        await s.close();
      }
      if (!r.ok) usage(r.error);
      const replaced = r.ok && r.replaced;
      if (o.json) console.log(JSON.stringify({ site: e.site, agent: e.agent, replaced, dataDir: c.dataDir }));
      else
        console.log(
          `${replaced ? 're-enrolled' : 'enrolled'} ${e.site}/${e.agent} in ${storeLabel(c)}; its bundles are accepted from now on`,
        );
    });
}
