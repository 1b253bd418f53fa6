import { AgentIdSchema, SiteIdSchema } from './ids.js';

/**
 * The line `edge-agent init` prints and an operator pastes at headquarters to enrol the agent:
 *
 *   hub enroll --site ship-7 --agent a1 --key ed25519:<43 base64url characters>
 *
 * It is a complete `hub` command, so pasting it into a shell on the hub's machine enrols the agent.
 */
export function enrolmentLine(site: string, agent: string, publicKeyText: string): string {
  return `hub enroll --site ${site} --agent ${agent} --key ${publicKeyText}`;
}

export type ParsedEnrolment =
  | { ok: true; site: string; agent: string; key: string }
  | { ok: false; error: string };

/** Reads an enrolment line back (tolerates a leading `npx `, extra spaces and `--flag=value`). */
export function parseEnrolmentLine(line: string): ParsedEnrolment {
  const words = line.trim().split(/\s+/);
  const flags: Record<string, string> = {};
  for (let i = 0; i < words.length; i++) {
    const w = words[i] as string;
    const eq = w.match(/^--(site|agent|key)=(.+)$/);
    if (eq) flags[eq[1] as string] = eq[2] as string;
    else if (/^--(site|agent|key)$/.test(w) && words[i + 1]) flags[w.slice(2)] = words[++i] as string;
  }
  const missing = ['site', 'agent', 'key'].filter((f) => !flags[f]);
  if (missing.length > 0)
    return { ok: false, error: `enrolment line lacks ${missing.map((m) => `--${m}`).join(', ')}` };
  const site = SiteIdSchema.safeParse(flags.site);
  if (!site.success) return { ok: false, error: site.error.issues[0]?.message ?? 'bad site id' };
  const agent = AgentIdSchema.safeParse(flags.agent);
  if (!agent.success) return { ok: false, error: agent.error.issues[0]?.message ?? 'bad agent id' };
  return { ok: true, site: site.data, agent: agent.data, key: flags.key as string };
}
