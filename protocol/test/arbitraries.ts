import fc from 'fast-check';
import { BUNDLE_KINDS, type BundleHeader, type Endpoint, PRIORITIES } from '../src/index.js';

const ULID_CHARS = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'.split('');
export const ulidArb = fc
  .array(fc.constantFrom(...ULID_CHARS), { minLength: 25, maxLength: 25 })
  .map((cs) => `0${cs.join('')}`);
const slugArb = fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,20}$/);
const hexHead = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString('hex'));

export const endpointArb: fc.Arbitrary<Endpoint> = fc.oneof(
  fc.constant('hub' as const),
  fc.record({ site: slugArb }, { requiredKeys: ['site'] }),
  fc.record({ site: slugArb, agent: slugArb }),
) as fc.Arbitrary<Endpoint>;

export const headerArb: fc.Arbitrary<BundleHeader> = fc.record(
  {
    id: ulidArb,
    kind: fc.constantFrom(...BUNDLE_KINDS),
    source: endpointArb,
    destination: endpointArb,
    created: fc.integer({ min: 0, max: 2 ** 47 }),
    lifetimeS: fc.integer({ min: 1, max: 2 ** 31 }),
    priority: fc.constantFrom(...PRIORITIES),
    doc: fc.string({ minLength: 1, maxLength: 60 }),
    heads: fc.array(hexHead, { maxLength: 4 }),
  },
  { requiredKeys: ['id', 'kind', 'source', 'destination', 'created', 'lifetimeS', 'priority'] },
) as fc.Arbitrary<BundleHeader>;
