import type * as A from '@automerge/automerge';
import type { DocCell, DocRun } from '@driftline/protocol';

/**
 * The agent's document as Automerge holds it (protocol's AgentDoc once unpacked): runs and cells are
 * packed strings (maps in documents written before decision 008), facts, bundle states and apply
 * records are maps of plain values.
 */
export interface StoredAgentDoc {
  site: A.ImmutableString | string;
  agent: A.ImmutableString | string;
  epoch: number;
  cells: Record<string, A.ImmutableString | DocCell>;
  runs: Record<string, A.ImmutableString | DocRun>;
  facts?: Record<string, unknown>;
  bundles?: Record<string, unknown>;
  applies?: Record<string, unknown>;
  requests?: Record<string, unknown>;
  /** Unchanged re-plans written apart from their cells (`confirmApart.ts`, decision 330). */
  confirmed?: Record<string, A.ImmutableString>;
  sealedAt?: number;
  /** When the agent last said it was there, in a contact window with nothing else to say (decision 450). */
  presentAt?: number;
}
export type AgentAutomergeDoc = A.Doc<StoredAgentDoc>;
