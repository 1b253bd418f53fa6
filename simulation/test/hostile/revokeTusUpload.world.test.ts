import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openStore, parseConfig as relayConfig } from '@driftline/relay';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { until } from '../support.js';
import { askPlan, planDone } from './plans.js';
import { startVirtualWorld } from './virtualWorld.js';
import { everyDetailArrives, runsWithDetail, type World } from './world.js';

/**
 * `relay token revoke` while the agent's detail upload is open at relay-1 over a slow link, on hop v1 and
 * v2 (issue 59; docs/decisions/411-revocation-cuts-at-once.md): the open tus PATCH is cut at once, the
 * detail never arrives at the hub, nothing more from the site's credential is taken, and what the hub
 * held before stays.
 *
 * The link: 40 ms each way, its uplink 32 kbit/s (4 kB/s), request bodies carried as they go
 * (`WorldLink.streamsBodies`), so relay-1 holds the PATCH open while the detail's bytes come: about 17 s
 * for this plan's 69 kB detail, revoked 3 s in. Carried whole, as the world's LAN does, the PATCH would
 * reach relay-1 only at its end and be refused there (401): that measures the link, not the cut.
 *
 * The bound. relay-1 checks the token of each open PATCH and held pull every second (`RECHECK_MS`), and a
 * revoked one is cut at that check: the agent learns it as its connection resets, at once. So a revoke
 * cuts the upload within one check period; `CUT_BOUND_MS` = 1.5 s allows the store lookup and the event
 * loop's turn on top, the same on both wires (what v2 changes is how pushes and pulls are signed, not how
 * a detail goes: a tus upload with the site's bearer token on both). Far under the upload's ~14 s left.
 */
const CUT_BOUND_MS = 1500;
const LINK = { uplink: { delayMs: 40, bandwidthBps: 32_000 }, downlink: { delayMs: 40 } };
/** Every refusal the agent logs: a pull, a push or an upload (its wording is the agent's own). */
const REFUSED = /downlink pull failed|no upstream reachable|refused by|blob upload did not finish/;

let world: World | undefined;
afterEach(async () => {
  await world?.stop();
  world = undefined;
});

/** A plan with changes whose detail is large (the fake's fleet retagged: simulation/README.md). */
function bigPlan(w: World, site = 'ship-1') {
  const dir = join(w.dir, site, 'infra', 'network');
  const scenario = { extraResources: 1500, extraChanges: true, steps: [{ state: 'changes' }] };
  writeFileSync(join(dir, 'fake-terraform.json'), JSON.stringify(scenario));
  writeFileSync(join(dir, 'main.tf'), '# a change whose detail is uploaded slowly\n');
}

/** `relay token revoke ship-1`: the CLI's own write to relay-1's store (another connection, as another process). */
function revokeAtRelay(w: World, site = 'ship-1'): number {
  const yaml = parse(readFileSync(join(w.dir, 'relay-1.yaml'), 'utf8')) as Record<string, unknown>;
  const cfg = relayConfig(yaml);
  if (!cfg.ok) throw new Error(`relay-1.yaml: ${cfg.errors.join('; ')}`);
  const { custody, tokens } = openStore(cfg.value);
  try {
    return tokens.revoke(site);
  } finally {
    custody.close();
  }
}

describe('revocation during a detail upload over a slow link', () => {
  for (const wire of [1, 2] as const)
    it(`cuts the open tus upload at once, and the detail never arrives (hop v${wire})`, async () => {
      world = await startVirtualWorld({ agentSync: { wire }, agentLink: LINK });
      const w = world;
      // the start-up run and its (small) detail: what the hub holds before the revoke
      const before = await everyDetailArrives(w, 'ship-1', 1);
      bigPlan(w);
      const id = await askPlan(w);
      // the result goes before its detail; then the detail's upload is created and its PATCH opened
      const done = await planDone(w, id, 120_000);
      await until(
        'relay-1 to take the detail upload',
        async () => (await w.relayMetric('driftline_hop_uploads_in_progress')) >= 1,
      );
      // a few seconds into the PATCH, well before its end
      await new Promise((r) => setTimeout(r, 3000));
      const runs = await runsWithDetail(w, 'ship-1', 2);
      expect(runs.find((r) => r.runId === done.runId)?.detailState).toBe('pending');
      const uploadFailures = () => w.logLines('ship-1', /blob upload did not finish/).length;
      const failedBefore = uploadFailures();
      const closedBefore = await w.relayMetric('driftline_hop_revoked_requests_closed_total');

      // on v2 the agent's pushes and pulls are signed messages: it does speak v2 to relay-1
      const v2Before = await w.relayMetric('driftline_hop_v2_messages_total', { peer: 'ship-1' });
      if (wire === 2) expect(v2Before).toBeGreaterThan(0);
      const pending = (await w.agentStatus('ship-1')).bytesPending;
      const revokedAt = Date.now();
      expect(revokeAtRelay(w)).toBeGreaterThan(0);
      const cut = await until(
        'the agent’s upload to be cut',
        async () => w.logLines('ship-1', /blob upload did not finish/)[failedBefore] ?? false,
        60_000,
      );
      const cutMs = Number(cut.time) - revokedAt;
      const closed = (await w.relayMetric('driftline_hop_revoked_requests_closed_total')) - closedBefore;
      // relay-1 said when it closed them (its held pulls, v1's by token and v2's by the key the token
      // registered, with the PATCH): each within the bound, and none of the credential's is open after
      const closings = w.logLines('relay-1', /a token was revoked/).map((l) => Number(l.time) - revokedAt);
      console.log(`revoke during a tus upload, hop v${wire}: cut after ${cutMs} ms`, {
        bytesPending: pending,
        closed,
        closings,
      });
      expect(cutMs).toBeLessThanOrEqual(CUT_BOUND_MS);
      expect(closed).toBeGreaterThanOrEqual(1);
      expect(closings.length).toBeGreaterThanOrEqual(1);
      expect(Math.max(...closings)).toBeLessThanOrEqual(CUT_BOUND_MS);
      expect(await w.relayMetric('driftline_hop_held_requests_open')).toBe(0);

      // Nothing more from the credential: the agent keeps trying and is refused (401), relay-1 takes no
      // byte from it, and the detail never arrives, long after the upload would have ended.
      const bytesIn = await w.relayMetric('driftline_hop_bytes_in_total', { peer: 'ship-1' });
      const v2In = await w.relayMetric('driftline_hop_v2_messages_total', { peer: 'ship-1' });
      const refused = w.logLines('ship-1', REFUSED).length;
      await until(
        'the agent to be refused three more times',
        async () => w.logLines('ship-1', REFUSED).length >= refused + 3,
      );
      await new Promise((r) => setTimeout(r, 120_000));
      expect(JSON.stringify(w.logLines('ship-1', REFUSED).slice(-3))).toMatch(/unauthorized|401/);
      expect(await w.relayMetric('driftline_hop_bytes_in_total', { peer: 'ship-1' })).toBe(bytesIn);
      expect(await w.relayMetric('driftline_hop_v2_messages_total', { peer: 'ship-1' })).toBe(v2In);
      const after = await runsWithDetail(w, 'ship-1', 2);
      expect(after).toHaveLength(2);
      expect(after.find((r) => r.runId === done.runId)?.detailState).not.toBe('arrived');
      // what was stored before stays
      const first = before[0];
      expect(after.find((r) => r.runId === first?.runId)?.detailState).toBe('arrived');
      console.log(`hop v${wire}: after the revoke`, after, { uploadFailures: uploadFailures() });
    });
});
