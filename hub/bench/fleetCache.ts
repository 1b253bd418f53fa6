/**
 * fleetScale's fleet: every site's agent, its document and its signed bundle per round, generated once
 * and cached in `bench/.cache/` (`fleetScale-<sites>x<cells>.bundles` and its `.meta.cbor` index), so a
 * rerun only measures. Each site has one agent planning `cells` cells (4 environments); round 1 plans
 * every cell (~3 % drift), rounds 2 and 3 change 5 % of the cells and confirm the rest unchanged.
 */
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import type * as A from '@automerge/automerge';
import {
  type BundleHeader,
  cborDecode,
  cborEncode,
  cryptoRandomBytes,
  docId,
  encodeBundle,
  generateSigningKeyPair,
  monotonicUlid,
  publicKeyToText,
} from '@driftline/protocol';
import type { TestClock } from '../test/agentSim.js';
import { FastAgentDoc, type RunSpec } from './agentDocs.js';

export const ROUNDS = 3;
const ENVS = ['prod', 'staging', 'dev', 'test'];
export const siteOf = (i: number) => `site-${String(i).padStart(4, '0')}`;

type Meta = { sites: number; cells: number; keys: string[]; clock: number; index: [number, number][][] };

export interface FleetCache {
  /** Each site's agent key (text), by site index. */
  keys: string[];
  /** Site `i`'s bundle of round `round` (0-based). */
  bundleOf(round: number, i: number): Uint8Array;
}

/** Opens the cache for `sites` × `cells`, generating it first when absent; `clock` ends where it did. */
export async function fleetCache(
  sites: number,
  cells: number,
  cacheDir: string,
  clock: TestClock,
  say: (m: string) => void,
): Promise<FleetCache> {
  mkdirSync(cacheDir, { recursive: true });
  const file = join(cacheDir, `fleetScale-${sites}x${cells}.bundles`);
  const metaFile = `${file}.meta.cbor`;
  const meta = existsSync(metaFile)
    ? (cborDecode(readFileSync(metaFile)) as Meta)
    : await generate(sites, cells, file, metaFile, clock, say);
  clock.advance(meta.clock - clock.now());
  const fd = openSync(file, 'r');
  return {
    keys: meta.keys,
    bundleOf: (round, i) => {
      const [offset, length] = (meta.index[round] as [number, number][])[i] as [number, number];
      const b = new Uint8Array(length);
      readSync(fd, b, 0, length, offset);
      return b;
    },
  };
}

async function generate(
  sites: number,
  cells: number,
  file: string,
  metaFile: string,
  clock: TestClock,
  say: (m: string) => void,
): Promise<Meta> {
  const t0 = performance.now();
  const ids = monotonicUlid(() => clock.now(), cryptoRandomBytes);
  const cadenceS: Record<string, number> = {};
  for (let c = 0; c < cells; c++) cadenceS[`${ENVS[c % 4]}/comp-${Math.floor(c / 4)}`] = 3600;
  const facts = (at: number) => ({
    version: '0.1.0',
    cadenceS,
    contactIntervalS: 3600,
    upstream: 'http://relay.local:8080',
    queueDepth: 0,
    reportedAt: at,
  });
  const out = openSync(file, 'w');
  const index: [number, number][][] = Array.from({ length: ROUNDS }, () => []);
  const keys: string[] = [];
  let at = 0;
  for (let i = 0; i < sites; i++) {
    const site = siteOf(i);
    const pair = await generateSigningKeyPair();
    keys.push(await publicKeyToText(pair.publicKey));
    const doc = new FastAgentDoc(site, 'a1', (i + 1).toString(16).padStart(32, '0'), facts);
    doc.publishFacts(facts(clock.now()), clock.now());
    let acked: A.Heads = [];
    for (let r = 0; r < ROUNDS; r++) {
      for (let c0 = 0; c0 < cells; c0 += 10) {
        const together: RunSpec[] = [];
        for (let c = c0; c < Math.min(cells, c0 + 10); c++) {
          clock.advance(1);
          const h = (i * 7919 + c * 104_729) % 100;
          const changed = r === 0 || (h + r * 37) % 100 < 5;
          together.push({
            runId: ids(),
            component: `comp-${Math.floor(c / 4)}`,
            environment: ENVS[c % 4] as string,
            status: (h + (changed ? r : 0)) % 100 < 3 ? 'drift' : 'clean',
            planHash: (changed ? r.toString(16) : '0').padStart(64, '0'),
            at: clock.now(),
          });
        }
        doc.recordBatch(together);
      }
      const heads = doc.h.getHeads();
      const header: BundleHeader & { kind: 'doc-delta' } = {
        id: ids() as never,
        kind: 'doc-delta',
        source: { site, agent: 'a1' } as never,
        destination: 'hub',
        created: clock.now(),
        lifetimeS: 30 * 86_400,
        priority: 'status',
        doc: docId(site, 'a1', 1),
        heads,
      };
      const changes = doc.h.saveSince(acked) as Uint8Array<ArrayBuffer>;
      const bytes = await encodeBundle(header, { epoch: 1, changes, blobs: [] }, pair.privateKey);
      writeSync(out, bytes);
      (index[r] as [number, number][]).push([at, bytes.length]);
      at += bytes.length;
      acked = heads;
      doc.confirmApart = true; // the hub's ack says it reads `confirmed` (decision 330)
    }
    doc.h.free();
  }
  closeSync(out);
  const meta: Meta = { sites, cells, keys, clock: clock.now(), index };
  writeFileSync(metaFile, cborEncode(meta));
  say(`generated ${sites}×${cells}×${ROUNDS} in ${Math.round((performance.now() - t0) / 1000)} s`);
  return meta;
}
