/**
 * Where a "Needs attention" row links to (`attentionGroups.ts`, `attentionCustody.ts`): the matrix
 * filtered so, or the Links view for a relay. Both row builders share it, so it lives apart from either.
 */

import { z } from 'zod';

/** What the row's link opens: the matrix filtered so, or the Links view for a relay. */
export type AttentionFilter =
  | { view: 'links'; relay: string }
  | { view: 'matrix'; site: string }
  | { view: 'matrix'; status: string; reason: string | null };

/** `AttentionFilter` on the wire. */
export const AttentionFilterSchema = z.union([
  z.object({ view: z.literal('links'), relay: z.string() }),
  z.object({ view: z.literal('matrix'), site: z.string() }),
  z.object({ view: z.literal('matrix'), status: z.string(), reason: z.string().nullable() }),
]);
