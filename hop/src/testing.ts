/** Test support for hop and its users (relay, hub): `import { makeBundle } from '@driftline/hop/testing'`. */
import {
  type BundleHeader,
  encodeBundle,
  encodeUlid,
  generateSigningKeyPair,
  type Priority,
  publicKeyToText,
  wire2,
} from '@driftline/protocol';

export { MemoryWire2Node } from './memory/MemoryWire2Node.js';
export { BROTLI_BOMB_INFLATED_BYTES, brotliBomb } from './testing/brotliBomb.js';
export { startFirstBytesTap } from './testing/firstBytesTap.js';

let counter = 0;
const keys = generateSigningKeyPair();

/**
 * A signed bundle small enough for tests; ids are distinct per call. By default a `doc-delta` from
 * agent `ship-7/a1` to the hub (what a downstream peer of site ship-7 may post); pass `kind: 'ack'`,
 * `source: 'hub'` and a site `destination` for downlink traffic.
 */
export async function makeBundle(
  over: Partial<BundleHeader> & { priority?: Priority } = {},
): Promise<{ id: string; bytes: Uint8Array }> {
  counter++;
  const rnd = new Uint8Array(10);
  new DataView(rnd.buffer).setUint32(6, counter);
  const id = over.id ?? encodeUlid(1_700_000_000_000 + counter, rnd);
  const header = {
    id,
    kind: 'doc-delta',
    source: { site: 'ship-7', agent: 'a1' },
    destination: 'hub',
    created: Date.now(),
    lifetimeS: 3600,
    priority: 'status',
    ...over,
  } as BundleHeader;
  const { privateKey } = await keys;
  const bytes =
    header.kind === 'ack'
      ? await encodeBundle(
          { ...header, kind: 'ack' },
          { agent: 'a1' as never, doc: 'd', heads: [], blobs: [], committedAt: 1 },
          privateKey,
        )
      : await encodeBundle(
          { ...header, kind: 'doc-delta', doc: header.doc ?? 'ship-7/a1/1' },
          { epoch: 1, changes: new Uint8Array([counter & 0xff]), blobs: [] },
          privateKey,
        );
  return { id, bytes };
}

/** h2c beside HTTP/1.1 on a test server's port (the hostile proxy speaks it as a relay does). */
export { acceptH2c } from './http/h2c.js';
export { type LockRace, lockRace } from './lock/lockRace.js';
export { stopsWithSupervisor } from './orphanCheck.js';

/** A hop v2 registration of `keys` for `site/agent`, with its proof (decision 495), as an agent sends it. */
export async function wire2Registration(
  keys: { publicKey: CryptoKey; privateKey: CryptoKey },
  site = 'ship-7',
  agent = 'a1',
): Promise<wire2.Wire2Registration> {
  const named = { site, agent, publicKey: await publicKeyToText(keys.publicKey) };
  return wire2.signRegistration(named, keys.privateKey);
}
