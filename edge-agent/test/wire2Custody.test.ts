import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HopClient } from '@driftline/hop/client';
import {
  type BundleHeader,
  encodeBatch,
  encodeBundle,
  generateSigningKeyPair,
  publicKeyToText,
  wire2,
} from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { custodyProblem, Wire2Link } from '../src/adapters/http/Wire2Link.js';
import { Wire2State } from '../src/adapters/http/wire2State.js';

/**
 * A v2 push is stored upstream only on the node's custody of it (docs/decisions/495-hop-v2-on-the-agent-link.md):
 * a 200 answer that is not a custody message from that node, to this agent, covering the push, is a failed
 * push (sent again later), not a receipt.
 */
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const info: wire2.Wire2Info = { wire: [1, 2], from: 77, node: 5, maxHoldS: 3600, keep: 2 };
const node = await generateSigningKeyPair();
const custody = (o: { from?: number; to?: number; upTo?: number; kind?: 'custody' | 'pull' }) =>
  wire2.encodeMessage(
    o.kind === 'pull'
      ? { kind: 'pull', from: o.from ?? 5, to: o.to ?? 77, seq: 1, body: { have: 0, holdS: 0 } }
      : { kind: 'custody', from: o.from ?? 5, to: o.to ?? 77, seq: 1, body: { upTo: o.upTo ?? 1 } },
    node.privateKey,
  );

describe('custody of a v2 push at the agent', () => {
  it('names what is wrong with an answer that is not the custody of the push', async () => {
    expect(custodyProblem(await custody({}), info, 1)).toBeNull();
    expect(custodyProblem(await custody({ upTo: 4 }), info, 3)).toBeNull(); // cumulative
    expect(custodyProblem(await custody({ upTo: 2 }), info, 3)).toBe('custody up to 2, not 3');
    expect(custodyProblem(await custody({ from: 6 }), info, 1)).toBe('from node 6, not 5');
    expect(custodyProblem(await custody({ to: 78 }), info, 1)).toBe("to 78, not this agent's 77");
    expect(custodyProblem(await custody({ kind: 'pull' }), info, 1)).toBe('a pull message');
    expect(custodyProblem(new TextEncoder().encode('<html>ok</html>'), info, 1)).toMatch(/hop v2 message/);
  });

  it('fails the push (to be sent again) when the upstream answers 200 with another agent’s custody', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-custody-'));
    dirs.push(dir);
    const keys = await generateSigningKeyPair();
    const answer = await custody({ to: 78, upTo: 1 });
    const client = {
      url: 'http://relay-1:7000',
      registerWire2: async () => ({ ok: true, value: info }),
      wire2Carrier: () => ({ carrier: 'http/1.1' as const }),
      exchangeWire2: async () => ({ ok: true, value: { status: 200, body: answer } }),
    } as unknown as HopClient;
    const link = new Wire2Link(client, {
      site: 'ship-7',
      agent: 'a1',
      privateKey: keys.privateKey,
      publicKey: await publicKeyToText(keys.publicKey),
      state: new Wire2State(join(dir, 'wire2-state.json')),
      now: Date.now,
    });
    const header = {
      id: '01KB7Z8Q0000000000000000AB',
      kind: 'doc-delta',
      source: { site: 'ship-7', agent: 'a1' },
      destination: 'hub',
      created: Date.now(),
      lifetimeS: 3600,
      priority: 'status',
      doc: 'ship-7/a1/epoch-1',
      heads: [],
    } as unknown as BundleHeader & { kind: 'doc-delta' };
    const delta = await encodeBundle(
      header,
      { epoch: 1, changes: Uint8Array.of(1, 2, 3), blobs: [] },
      keys.privateKey,
    );
    const r = await link.push(encodeBatch([delta]));
    expect(r?.ok).toBe(false);
    expect(r?.ok === false && r.error).toMatch(/is not its custody of it \(to 78, not this agent's 77\)/);
  });
});
