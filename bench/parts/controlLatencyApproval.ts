/**
 * controlLatency, its second half (issue 35; docs/decisions/270-control-first.md): an approval and a
 * provider-mirror publication made at headquarters while the agent is busy (its plan's detail upload in
 * flight), as processes: hub ← lan ← relay (pulling the hub every second, as the demo) ← Mars link ×60
 * (12 s one way, held up, its uplink capped at 750 B/s so the detail takes minutes) ← agent with the fake
 * terraform and default sync settings (held pulls, `sync.downlinkHoldS` 55). Measured from the agent's own
 * log lines ('publication announced', 'approval received', 'apply finished') against the hub's
 * `publishedAt` and `submittedAt`, in one-way light times, beside the floor (hub → relay → agent light
 * time) measured over the same links in the same run.
 */
import { rmSync } from 'node:fs';
import { type BusySite, startBusySite, until as waitFor } from '@driftline/simulation/testing';
import { emit, isQuick, log, tmp } from '../lib/agent.js';

const TIME_SCALE = isQuick ? 360 : 60;
const WAIT_MS = 900_000;
const dir = tmp('approval');
let site: BusySite | null = null;
const r2 = (x: number) => Math.round(x * 1000) / 1000;
try {
  site = await startBusySite({
    dir,
    link: { profile: 'mars', timeScale: TIME_SCALE, settings: { uplink: { bandwidthBps: 6000 } } },
    extraResources: 5000,
  });
  const s = site;
  const D = s.siteLink.control.settings().downlink.delayMs;
  const runId = await s.publishAndPlan(WAIT_MS);
  const state = await s.detailState(runId);
  if (state !== 'pending') {
    log('controlLatency', 'agent log so far', { lines: s.lines.map((l) => [l.time, l.msg]) });
    throw new Error(`the plan's detail is '${state}', not 'pending': the agent is not busy uploading it`);
  }
  const upAt = (msg: string, f?: Parameters<BusySite['line']>[1]) =>
    waitFor(msg, async () => s.line(msg, f)?.time, WAIT_MS, 20);

  // A connected agent: its held pull waits at the relay (none is there for two light times after an
  // answer, and the hold's end starts another gap: docs/decisions/270-control-first.md), so each send
  // waits until the last downlink is a light time old, and no older than the hold.
  const settle = () => s.heldPullWaiting(D);
  // A provider mirror published while the detail goes up.
  await settle();
  const publishedAt = await s.publishMirror();
  const announcedAt = await upAt('publication announced', (l) => l.kind === 'provider-mirror');
  const takenAt = await upAt('publication taken', (l) => l.kind === 'provider-mirror');
  const mirror = { receivedMs: announcedAt - publishedAt, takenMs: takenAt - publishedAt };
  log('controlLatency', 'provider mirror (ms from the hub’s publishedAt)', mirror);

  // An approval of the plan whose detail is still going up, once the hub's ack of the agent's report of
  // the publication has come down (an answer to the held pull), if it comes within 10 D.
  await waitFor(
    'the ack after the mirror',
    async () => s.line('hub acknowledged', (l) => (l.time ?? 0) > takenAt),
    10 * D,
    50,
  ).catch(() => {});
  await settle();
  await s.approve(runId);
  const receivedAt = await upAt('approval received');
  const busy = (await s.detailState(runId)) === 'pending';
  const appliedAt = await upAt('apply finished', (l) => l.runId === runId && l.state === 'applied');
  const j = await waitFor(
    'the hub to show the run applied',
    async () => {
      const x = await s.journey(runId);
      return x?.state === 'applied' ? { ...x, seenAt: Date.now() } : undefined;
    },
    WAIT_MS,
    50,
  );
  const submittedAt = Date.parse(j.submittedAt);
  // The floor, measured over the same links once the rest is done: the median of three.
  const floors: number[] = [];
  for (let i = 0; i < 3; i++) floors.push(await s.floorMs());
  const floorMs = [...floors].sort((a, b) => a - b)[1] as number;
  log('controlLatency', 'busy agent, floor measured (hub → relay → agent)', {
    D,
    floors: floors.map(Math.round),
  });

  const approval = {
    receivedMs: receivedAt - submittedAt,
    appliedMs: appliedAt - receivedAt,
    appliedAtHubMs: j.seenAt - receivedAt,
  };
  log('controlLatency', 'approval (receipt from the hub’s submittedAt; applied from the receipt)', approval);
  log('controlLatency', 'the detail upload was in flight when the approval arrived', { busy });
  emit({
    oneWayDelayMs: D,
    measuredFloorMs: Math.round(floorMs),
    approvalMs: approval.receivedMs,
    approvalVsFloor: r2(approval.receivedMs / floorMs),
    approvalToAppliedMs: approval.appliedMs,
    approvalToAppliedLightTimes: r2(approval.appliedMs / D),
    appliedAtHubLightTimes: r2(approval.appliedAtHubMs / D),
    mirrorMs: mirror.receivedMs,
    mirrorVsFloor: r2(mirror.receivedMs / floorMs),
    mirrorTakenLightTimes: r2(mirror.takenMs / D),
    busy,
  });
} finally {
  await site?.close();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
