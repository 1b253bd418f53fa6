import { fromBase64, sha256Hex, toBase64Url } from './bytes.js';
import { AgentIdSchema, SiteIdSchema } from './ids.js';

/** Version tag every enrolment string starts with. */
export const ENROLMENT_PREFIX = 'dle1';

/** What an enrolment string carries: who the agent is and the public key the hub pins for it. */
export interface Enrolment {
  site: string;
  agent: string;
  /** `ed25519:<43 base64url characters>` */
  key: string;
}

export type DecodedEnrolment = { ok: true; value: Enrolment } | { ok: false; error: string };

const KEY_TEXT = /^ed25519:[A-Za-z0-9_-]{43}$/;
const AGAIN =
  'copy it again in one piece (`edge-agent init --config <agent.yaml>` prints the same string again)';

/** Eight hex characters of sha256 over the string's head: catches a cut or mistyped copy. */
const checkOf = async (head: string) => (await sha256Hex(head)).slice(0, 8);

/**
 * One token that enrols an agent at the hub: `dle1.<base64url of {"site","agent","key"}>.<check>`, where
 * `check` is 8 hex characters of the sha256 of everything before it. `edge-agent init` prints it inside
 * `hub enroll --config hub.yaml <string>`; one word, so a shell, a chat window or a ticket cannot split
 * it, and a copy that was cut or changed is refused instead of pinning a wrong key.
 */
export async function encodeEnrolment(e: Enrolment): Promise<string> {
  const json = JSON.stringify({ site: e.site, agent: e.agent, key: e.key });
  const head = `${ENROLMENT_PREFIX}.${toBase64Url(new TextEncoder().encode(json))}`;
  return `${head}.${await checkOf(head)}`;
}

/**
 * Reads an enrolment string back, with an error that says what is wrong and what to do. Whitespace
 * inside it (a terminal that wrapped the line) is ignored.
 */
export async function decodeEnrolment(text: string): Promise<DecodedEnrolment> {
  const s = text.replace(/\s+/g, '');
  const fail = (error: string): DecodedEnrolment => ({ ok: false, error });
  const version = /^dle(\d+)\./.exec(s);
  if (!version)
    return fail(
      `'${s.slice(0, 24)}${s.length > 24 ? '…' : ''}' is not an enrolment string (it starts with '${ENROLMENT_PREFIX}.'): ` +
        'paste the last word of the `hub enroll` line `edge-agent init` printed',
    );
  if (version[0] !== `${ENROLMENT_PREFIX}.`)
    return fail(
      `enrolment string version 'dle${version[1]}' is newer than this hub reads (${ENROLMENT_PREFIX}): ` +
        'upgrade the hub, or enrol with --site, --agent and --key from `edge-agent init --json`',
    );
  const parts = s.split('.');
  if (parts.length !== 3 || !parts[2])
    return fail(`the enrolment string is incomplete (it has a payload and a check, joined by '.'): ${AGAIN}`);
  const head = `${parts[0]}.${parts[1]}`;
  if ((await checkOf(head)) !== parts[2])
    return fail(`the enrolment string was cut or changed in copying (its check does not match): ${AGAIN}`);
  let raw: unknown;
  try {
    raw = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(fromBase64(parts[1] as string)));
  } catch {
    return fail(`the enrolment string does not decode: ${AGAIN}`);
  }
  const o = (raw ?? {}) as Record<string, unknown>;
  const site = SiteIdSchema.safeParse(o.site);
  if (!site.success) return fail(`the enrolment string's site: ${site.error.issues[0]?.message}`);
  const agent = AgentIdSchema.safeParse(o.agent);
  if (!agent.success) return fail(`the enrolment string's agent: ${agent.error.issues[0]?.message}`);
  if (typeof o.key !== 'string' || !KEY_TEXT.test(o.key))
    return fail(`the enrolment string's key is not 'ed25519:' and 43 base64url characters: ${AGAIN}`);
  return { ok: true, value: { site: site.data, agent: agent.data, key: o.key } };
}

/** The line to run on the hub's machine: `hub enroll --config <hubConfig> <enrolment string>`. */
export function enrolCommand(enrolment: string, hubConfig = 'hub.yaml'): string {
  return `hub enroll --config ${hubConfig} ${enrolment}`;
}
