import { z } from 'zod';
import { toBase64Url } from '../bytes.js';
import { type Decoded, fail } from '../codecError.js';
import { signBytes } from '../keys.js';
import { CborSubsetError, cborDecodeItem, cborEncodeValue, DEFAULT_CBOR_LIMITS, type Value } from './cbor.js';

/**
 * How hop v2 rides the hop API today (docs/decisions/495-hop-v2-on-the-agent-link.md): an agent that
 * registers its key with its upstream (`POST /v1/peer/wire2`, with its bearer token) sends its pushes
 * and pulls as signed messages to `POST /v2`; a relay forwards a push verbatim, inside its v1 batch.
 */
export const WIRE2_PATH = '/v2';
export const WIRE2_REGISTER_PATH = '/v1/peer/wire2';
/** What a v2 answer is (RFC 8949's type); a request needs none: every `POST /v2` body is a message. */
export const WIRE2_CONTENT_TYPE = 'application/cbor';
/**
 * On a registration, `1`: this agent can carry its v2 exchanges on h2c (issue 46). Only then does the
 * answer state `h2c`: an agent built before it reads the answer with a strict schema, and a field it does
 * not know would make it take the node for one without v2 (asked again every exchange, on v1).
 */
export const WIRE2_H2C_HEADER = 'driftline-h2c';
/** The hub's short id in `to` (decision 490). */
export const HUB_NODE_ID = 0;

/** `POST /v1/peer/wire2`: the agent names itself and the key its messages will be signed with. */
export const Wire2RegistrationSchema = z.strictObject({
  site: z.string().min(1).max(63),
  agent: z.string().min(1).max(63),
  /** `ed25519:…`, the key the hub enrolled for the agent. */
  publicKey: z.string().min(1).max(200),
  /**
   * base64url Ed25519 signature by that key over {@link registrationBytes}: the registrant holds the key,
   * so a token of one site cannot pin another site's agent key by naming it (decision 495).
   */
  proof: z
    .string()
    .regex(/^[A-Za-z0-9_-]{86}$/, 'proof must be a base64url Ed25519 signature (86 characters)'),
});
export type Wire2Registration = z.infer<typeof Wire2RegistrationSchema>;

/** What a registration's `proof` signs: a domain, then the site, the agent and the key, NUL-separated. */
export function registrationBytes(r: { site: string; agent: string; publicKey: string }): Uint8Array {
  return new TextEncoder().encode(`driftline/wire2-register\0${r.site}\0${r.agent}\0${r.publicKey}`);
}

/** A registration of `named`, its proof signed with the key it names (the agent's). */
export async function signRegistration(
  named: { site: string; agent: string; publicKey: string },
  privateKey: CryptoKey,
): Promise<Wire2Registration> {
  return { ...named, proof: toBase64Url(await signBytes(privateKey, registrationBytes(named))) };
}

/**
 * The answer: the node speaks v2; the ids to put in `from` and `to`, and how it holds pulls. Fields it
 * does not know are passed over (not strict), so a node can state more without breaking this agent.
 */
export const Wire2InfoSchema = z.object({
  wire: z.array(z.number().int()).max(8),
  /** The agent's short id: the first 4 bytes of sha256 over its raw public key, as a uint. */
  from: z.number().int().nonnegative(),
  /** This node's short id (0: the hub). */
  node: z.number().int().nonnegative(),
  /** The longest hold it grants a pull, seconds, and how many held pulls of one agent it keeps. */
  maxHoldS: z.number().int().nonnegative(),
  keep: z.number().int().positive(),
  /**
   * The node serves HTTP/2 with prior knowledge on this port (stated only to a registration that said
   * it reads it, {@link WIRE2_H2C_HEADER}): the agent may carry its `POST /v2` exchanges on one h2c
   * connection kept across rounds.
   */
  h2c: z.boolean().optional(),
  /** As `GET /v1/peer`'s: the hub's v2 messages besides acks this node carries down (decision 505). */
  carries: z.array(z.string().max(40)).max(16).optional(),
  /** As `GET /v1/peer`'s: the compact push forms every node from here to the hub reads (decision 510). */
  pushForms: z.array(z.string().max(40)).max(16).optional(),
});
/** What `carries` names for the hub's compact publication manifests (decision 505). */
export const CARRIES_PUBLICATIONS = 'publication';
/** What `carries` names for compact publications with a git bundle's heads packed (field 9, decision 520). */
export const CARRIES_GIT_HEADS = 'publication-git-heads';
/**
 * Every `carries` name this build carries: a relay states no name its upstreams state that it does not know
 * itself (a later one may need a relay that reads it).
 */
export const CARRIED: readonly string[] = [CARRIES_PUBLICATIONS, CARRIES_GIT_HEADS];
/** What `pushForms` names for blob announcements in binary (push field 9, decision 510). */
export const PUSH_FORM_BLOB_LIST = 'blob-list';
/** What `pushForms` names for changes deflated against the shared dictionary (`dz1`, decision 510). */
export const PUSH_FORM_DZ1 = 'changes-dz1';
/**
 * What `pushForms` names for the agent's clock term, push field 10 (decision 495's clock terms): a relay
 * that states it composes the term into the push's source clock, as v1's `driftline-clock`.
 */
export const PUSH_FORM_CLOCK = 'clock';
/**
 * What `pushForms` names for push field 11, `ackLater` (decision 525): the hub may ack a push of a round
 * under way with the agent's next push, or after the seconds it names.
 */
export const PUSH_FORM_ACK_LATER = 'ack-later';
/**
 * What `pushForms` names for custody with the next push (decision 530): the node answers a push that
 * carries `ackLater` with 204 once it holds it, and its next custody (`upTo`, cumulative) covers it.
 */
export const PUSH_FORM_CUSTODY_LATER = 'custody-later';
/**
 * The push forms this build reads (decision 510). A relay decodes every push it carries strictly, so
 * it states only those of its upstreams' forms that are here too; a relay older than the field states none.
 */
export const PUSH_FORMS: readonly string[] = [
  PUSH_FORM_BLOB_LIST,
  PUSH_FORM_DZ1,
  PUSH_FORM_CLOCK,
  PUSH_FORM_ACK_LATER,
  PUSH_FORM_CUSTODY_LATER,
];
export type Wire2Info = z.infer<typeof Wire2InfoSchema>;

/**
 * What a pull is answered with when something is due: `[cursor, [item…], refusals?]`, unsigned CBOR. Each
 * item is the hub's own signed bundle or message, checked by the agent (S4); the cursor goes back as the
 * next pull's `have`. A held pull with nothing due is answered 204, no body.
 */
export interface PullAnswer {
  cursor: number;
  items: Uint8Array[];
  /** What the relay's upstream refused of the site's bundles (v1's `driftline-refusals`), as its JSON. */
  refusals?: string;
}

export function encodePullAnswer(a: PullAnswer): Uint8Array {
  const items: Value[] = [a.cursor, a.items];
  if (a.refusals) items.push(a.refusals);
  return cborEncodeValue(items);
}

export function decodePullAnswer(bytes: Uint8Array): Decoded<PullAnswer> {
  try {
    const { value, end } = cborDecodeItem(bytes, 0, { ...DEFAULT_CBOR_LIMITS, maxDepth: 3 });
    if (end !== bytes.length) return fail('bad-bundle', `pull answer: ${bytes.length - end} stray bytes`);
    if (!Array.isArray(value) || value.length < 2 || value.length > 3)
      return fail('bad-bundle', 'pull answer: not [cursor, items, refusals?]');
    const [cursor, items, refusals] = value as Value[];
    if (typeof cursor !== 'number') return fail('bad-bundle', 'pull answer: the cursor is not a uint');
    if (!Array.isArray(items) || !items.every((i) => i instanceof Uint8Array))
      return fail('bad-bundle', 'pull answer: the items are not byte strings');
    if (refusals !== undefined && typeof refusals !== 'string')
      return fail('bad-bundle', 'pull answer: the refusals are not text');
    return {
      ok: true,
      value: { cursor, items: items as Uint8Array[], ...(refusals ? { refusals } : {}) },
    };
  } catch (e) {
    if (e instanceof CborSubsetError) return fail('bad-bundle', `pull answer: ${e.message}`);
    throw e;
  }
}

/** true when `bytes` begin as a hop v2 message does (a v1 bundle begins "DLB"). */
export const isWire2Message = (bytes: Uint8Array): boolean => bytes[0] === 0x87 && bytes[1] === 0x02;
