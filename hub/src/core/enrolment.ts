import { AgentIdSchema, publicKeyFromText, publicKeyToText, SiteIdSchema } from '@driftline/protocol';
import type { AgentRow, ReadStore, StoreWrites } from '../ports/HubStore.js';

/** Enrolment reads an agent's row and writes it back. */
type AgentRecords = StoreWrites & Pick<ReadStore, 'getAgent'>;

export type EnrolResult = { ok: true; agent: AgentRow; replaced: boolean } | { ok: false; error: string };

/**
 * Pins an agent's public key (S4). Re-enrolling with a new key replaces the old one and lifts a
 * revocation; everything the agent sent before stays.
 */
export async function enrol(
  store: AgentRecords,
  input: { site: string; agent: string; key: string },
  now: number,
): Promise<EnrolResult> {
  const site = SiteIdSchema.safeParse(input.site);
  if (!site.success) return { ok: false, error: `--site: ${site.error.issues[0]?.message}` };
  const agent = AgentIdSchema.safeParse(input.agent);
  if (!agent.success) return { ok: false, error: `--agent: ${agent.error.issues[0]?.message}` };
  let keyText: string;
  try {
    keyText = await publicKeyToText(await publicKeyFromText(input.key));
  } catch (e) {
    return {
      ok: false,
      error: `--key: ${(e as Error).message} (paste the line \`edge-agent init\` printed)`,
    };
  }
  const prev = await store.getAgent(site.data, agent.data);
  const row: AgentRow = prev
    ? { ...prev, publicKey: keyText, enrolledAt: now, revokedAt: null }
    : {
        site: site.data,
        agent: agent.data,
        publicKey: keyText,
        enrolledAt: now,
        revokedAt: null,
        version: null,
        lastContactAt: null,
        queueDepth: null,
        oldestUnsentAt: null,
        clockOffsetMs: null,
        offsetSampledAt: null,
        upstream: null,
        cadenceS: {},
        contactIntervalS: null,
        contactWindows: [],
      };
  await store.commit({ agents: [row] });
  return { ok: true, agent: row, replaced: prev !== null };
}

export async function revoke(
  store: AgentRecords,
  site: string,
  agent: string,
  now: number,
): Promise<{ ok: true } | { ok: false; error: string }> {
  const prev = await store.getAgent(site, agent);
  if (!prev) return { ok: false, error: `agent '${site}/${agent}' is not enrolled (see \`hub agents\`)` };
  if (prev.revokedAt === null) await store.commit({ agents: [{ ...prev, revokedAt: now }] });
  return { ok: true };
}
