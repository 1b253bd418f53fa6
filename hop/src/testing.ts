/** Test support for hop and its users (relay, hub): `import { makeBundle } from '@driftline/hop/testing'`. */
import {
  type BundleHeader,
  encodeBundle,
  encodeUlid,
  generateSigningKeyPair,
  type Priority,
} from '@driftline/protocol';

let counter = 0;
const keys = generateSigningKeyPair();

/** A signed `control`-shaped bundle small enough for tests; ids are distinct per call. */
export async function makeBundle(
  over: Partial<BundleHeader> & { priority?: Priority } = {},
): Promise<{ id: string; bytes: Uint8Array }> {
  counter++;
  const rnd = new Uint8Array(10);
  new DataView(rnd.buffer).setUint32(6, counter);
  const id = over.id ?? encodeUlid(1_700_000_000_000 + counter, rnd);
  const header = {
    id,
    kind: 'ack',
    source: 'hub',
    destination: 'hub',
    created: Date.now(),
    lifetimeS: 3600,
    priority: 'status',
    ...over,
  } as BundleHeader & { kind: 'ack' };
  const bytes = await encodeBundle(
    header,
    { agent: 'a1' as never, doc: 'd', heads: [], blobs: [], committedAt: 1 },
    (await keys).privateKey,
  );
  return { id, bytes };
}
