import type { ServerResponse } from 'node:http';
import { alteredDownlink, fakeReceipts, fakeTusCompletion, flippedBytes, silentPulls } from './attacks.js';
import { swapPayloads } from './clockAttacks.js';
import type { Attack, RequestVerdict } from './hostileHandler.js';
import {
  alteredPullAnswers,
  droppedAckLaterPushes,
  fakeCustody,
  flippedPushes,
  silentV2Pulls,
} from './wire2Attacks.js';
import { swapV2Pushes } from './wire2RelayAttacks.js';

/**
 * The lies a hostile relay tells on a long run (the world's `hostile` fault, `hostileFaults.ts`): each one
 * the hostile suite's attacks on the agent's link, on hop v1 and v2 at once (the sites of a world speak
 * either), so an episode lies to every site whatever it speaks. Each counts what it did, by part.
 */
export const LIE_NAMES = [
  'flipped bytes',
  'fake tus completion',
  'altered downlink',
  'fake receipts',
  'swapped payloads',
  'silent drops',
] as const;
export type LieName = (typeof LIE_NAMES)[number];

export interface Lie {
  name: LieName;
  attack: Attack;
  /** What it did so far, by part (`v1 bundles`, `tus patches`, …). */
  did(): Record<string, number>;
  /** As the episode ends: lets go of what it took over and still holds (answered 503, as a hop that gives up). */
  release?(): void;
}

/** Keeps what an attack takes over, so the hop can let go of it when its episode ends. */
function holding(a: Attack): Attack & { release(): void } {
  const held = new Set<ServerResponse>();
  const keep = (out: ServerResponse) => {
    held.add(out);
    out.on('close', () => held.delete(out));
    return true;
  };
  return {
    ...a,
    takeOver: (req, out) => (a.takeOver?.(req, out) ?? false) && keep(out),
    takeOverRead: (req, out) => (a.takeOverRead?.(req, out) ?? false) && keep(out),
    release() {
      for (const out of held) if (!out.headersSent) out.writeHead(503, { 'retry-after': '1' }).end('let go');
      held.clear();
    },
  };
}

/** Several attacks as one hop: the first whose request hook answers or forwards decides; answers go through each. */
export function together(name: string, parts: readonly Attack[]): Attack {
  return {
    name,
    takeOver: (req, out) => parts.some((p) => p.takeOver?.(req, out) ?? false),
    takeOverRead: (req, out) => parts.some((p) => p.takeOverRead?.(req, out) ?? false),
    async onRequest(req) {
      for (const p of parts) {
        const v: RequestVerdict = await p.onRequest?.(req);
        if (v) return v;
      }
      return undefined;
    },
    async onResponse(req, res) {
      let out = res;
      for (const p of parts) out = (await p.onResponse?.(req, out)) ?? out;
      return out === res ? undefined : out;
    },
  };
}

/** Whether a lie can touch anything in a world whose sites speak these wires (a swap needs two of one). */
export function lieFits(name: LieName, wires: readonly (1 | 2)[]): boolean {
  if (name !== 'swapped payloads') return true;
  return wires.filter((w) => w === 1).length >= 2 || wires.filter((w) => w === 2).length >= 2;
}

/** A fresh lie of that name (its counts at zero). */
export function makeLie(name: LieName): Lie {
  const all = Number.POSITIVE_INFINITY;
  switch (name) {
    case 'flipped bytes': {
      const v1 = flippedBytes({ bundles: all, patches: all });
      const v2 = flippedPushes(all);
      return {
        name,
        attack: together(name, [v1, v2]),
        did: () => ({
          'v1 bundles': v1.flipped.bundles,
          'tus patches': v1.flipped.patches,
          'v2 pushes': v2.flipped,
        }),
      };
    }
    case 'fake tus completion': {
      const a = fakeTusCompletion();
      return { name, attack: a, did: () => ({ 'uploads faked': a.completed }) };
    }
    case 'altered downlink': {
      const v1 = alteredDownlink();
      const v2 = alteredPullAnswers();
      return {
        name,
        attack: together(name, [v1, v2]),
        did: () => ({ 'v1 copies': v1.altered, 'v2 copies': v2.altered }),
      };
    }
    case 'fake receipts': {
      const v1 = fakeReceipts();
      const v2 = fakeCustody();
      return {
        name,
        attack: together(name, [v1, v2]),
        did: () => ({ 'v1 receipts': v1.faked, 'v2 custody': v2.faked }),
      };
    }
    case 'swapped payloads': {
      const v1 = swapPayloads();
      const v2 = swapV2Pushes();
      return {
        name,
        attack: together(name, [v1, v2]),
        did: () => ({ 'v1 posts': v1.swapped, 'v2 pushes': v2.swapped }),
      };
    }
    case 'silent drops': {
      const v1 = silentPulls();
      const v2 = silentV2Pulls();
      const round = droppedAckLaterPushes();
      const attack = holding(together(name, [v1, v2, round]));
      return {
        name,
        attack,
        release: () => attack.release(),
        did: () => ({
          'v1 pulls held': v1.held,
          'v2 pulls held': v2.held,
          'v2 pushes dropped': round.dropped,
        }),
      };
    }
  }
}
