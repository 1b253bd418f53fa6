import * as A from '@automerge/automerge';
import type { AgentAutomergeDoc } from './storedDoc.js';

/**
 * The agent's presence: one scalar, `presentAt` (agent clock, ms), written in a contact window it has
 * nothing else to say in. It travels as any change does, signed in a `doc-delta`, so every hub merges it
 * and counts it as contact from this agent (docs/decisions/450-contact-the-agent-proves.md). A change
 * with one scalar costs about a hundred bytes; an empty delta would cost less but a hub before decision
 * 450 refuses it as `bad-bundle`, holding the agent's pushes back for `rejectedRetryS`.
 */
export function writePresence(doc: AgentAutomergeDoc, at: number): AgentAutomergeDoc {
  return A.change(doc, { message: 'presence', time: Math.floor(at / 1000) }, (d) => {
    d.presentAt = at;
  });
}
