import { wire2SiteId } from '@driftline/hop';
import type { HttpUplink } from '../adapters/http/HttpUplink.js';
import type { RunningPublications } from '../adapters/publications/startPublications.js';
import type { AgentConfig } from '../config.js';
import type { ApplyCoordinator } from '../core/apply/ApplyCoordinator.js';
import type { AgentLedger } from '../core/ledger/AgentLedger.js';
import { findTarget } from '../core/plan/planTarget.js';
import { allowsRef, cellRefOf } from '../core/plan/refPolicy.js';
import type { CellScheduler } from '../core/schedule/CellScheduler.js';
import type { HubWindowsHeld } from '../core/sync/hubWindows.js';
import { SyncEngine, type Wire2Acks } from '../core/sync/SyncEngine.js';
import { SyncLoop } from '../core/sync/SyncLoop.js';
import { WindowAim } from '../core/sync/windowAim.js';
import type { Logger } from '../ports/Logger.js';

/**
 * The sync engine over the agent's upstreams and the loop that drives it: plan requests from the hub go
 * to the scheduler, blob manifests to the publications, approvals to the apply coordinator.
 */
export function agentSync(
  config: AgentConfig,
  deps: {
    store: AgentLedger;
    uplinks: HttpUplink[];
    /** Hop v2's pushes, for the acks that name them (`sync.wire: 2`). */
    wire2?: Wire2Acks;
    privateKey: CryptoKey;
    hubPublicKey: CryptoKey;
    scheduler: CellScheduler;
    publications: RunningPublications;
    applies: ApplyCoordinator;
    newId: () => string;
    now: () => number;
    setTimer(ms: number, fn: () => void): () => void;
    log: Logger;
    /** Backoff and schedule jitter (default `Math.random`; a world's seed in simulation). */
    random?: () => number;
    onUploadProgress?(sha256: string, sent: number, total: number): void;
    /** The windows the hub declared for the site, as held (decision 590). */
    hubWindows?: HubWindowsHeld;
    /** The windows held changed: the facts say so and the loop pushes them. */
    onHubWindows?(windows: string[]): void;
  },
): SyncLoop {
  const { scheduler, log } = deps;
  // The site's own contact plan: the loop syncs as each window opens, tries often inside it, and says
  // it is there when it has nothing else to say (docs/decisions/450-contact-the-agent-proves.md).
  // With the windows the hub declared for the site, once it sent them (docs/decisions/590-windows-declared-once.md).
  const own = config.sync.contactWindows;
  const aim = new WindowAim([...own, ...(deps.hubWindows?.windows() ?? [])], config.sync.backoffCapS * 1000);
  let loop: SyncLoop | undefined;
  const engine = new SyncEngine({
    site: config.site,
    agent: config.agent,
    store: deps.store,
    uplinks: deps.uplinks,
    ...(deps.wire2 ? { wire2: deps.wire2 } : {}),
    privateKey: deps.privateKey,
    hubPublicKey: deps.hubPublicKey,
    allowsCell: (environment, component, ref) =>
      findTarget(config, component, environment) !== undefined &&
      allowsRef(config, environment, component, ref),
    onPlanRequest: (req) => {
      const ref = cellRefOf(findTarget(config, req.component, req.environment)?.component, req.ref);
      scheduler.trigger(
        {
          component: req.component,
          environment: req.environment,
          ...(ref ? { ref } : {}),
          ...(req.commit ? { commit: req.commit } : {}),
        },
        'request',
      );
    },
    newBundleId: deps.newId,
    now: deps.now,
    lifetimeS: config.sync.bundleLifetimeS,
    log,
    siteShortId: wire2SiteId(config.site),
    onBlobManifest: (m) => deps.publications.announce(m),
    onApproval: (a) => deps.applies.receive(a),
    onContactWindows: (c) => {
      const held = deps.hubWindows;
      if (!held?.take(c)) return;
      aim.set([...own, ...held.windows()]);
      deps.onHubWindows?.(held.windows());
      loop?.kick();
    },
    // a plan without windows owes no presence and aims at nothing: both read the plan each time
    presenceDue: (at: number | null, now: number) => aim.presenceDue(at, now),
  });
  loop = new SyncLoop({
    engine,
    intervalMs: config.sync.intervalS * 1000,
    holdS: config.sync.downlinkHoldS,
    heldPulls: config.sync.heldPulls,
    // each upstream's downlink its own lane (decision 410)
    upstreams: deps.uplinks.map((u) => u.url),
    backoffBaseMs: config.sync.backoffBaseS * 1000,
    backoffCapMs: config.sync.backoffCapS * 1000,
    setTimer: deps.setTimer,
    random: deps.random ?? Math.random,
    log,
    onUploadProgress: deps.onUploadProgress,
    aim: (ms: number, now: number) => aim.wait(ms, now),
    inWindow: (now: number) => aim.openAt(now) !== null,
  });
  return loop;
}
