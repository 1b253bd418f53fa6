import { describe, expect, it } from 'vitest';
import {
  decodeDownlinkNotice,
  encodeDownlinkNotice,
  NOTICE_MAX_BYTES,
} from '../src/adapters/postgres/downlinkNotice.js';

describe('the notice of downlink committed at another hub (decision 635)', () => {
  it('names the sites, each once, and who sent it', () => {
    const p = encodeDownlinkNotice('hub-a', ['ship-7', 'ship-9', 'ship-7']);
    expect(decodeDownlinkNotice(p)).toEqual({ from: 'hub-a', sites: ['ship-7', 'ship-9'] });
    expect(decodeDownlinkNotice(encodeDownlinkNotice('hub-a', 'every'))).toEqual({
      from: 'hub-a',
      sites: 'every',
    });
  });

  it('says every site when the list would not fit in a notification', () => {
    const sites = Array.from({ length: 2000 }, (_, i) => `site-${i}`);
    const p = encodeDownlinkNotice('hub-a', sites);
    expect(Buffer.byteLength(p)).toBeLessThanOrEqual(NOTICE_MAX_BYTES);
    expect(decodeDownlinkNotice(p)).toEqual({ from: 'hub-a', sites: 'every' });
    // a list just short of the limit is still sent as a list, one site more is every site
    const fits = Array.from({ length: 1000 }, (_, i) => `s-${String(i).padStart(3, '0')}`);
    const bytes = (n: number) =>
      Buffer.byteLength(JSON.stringify({ from: 'hub-a', sites: fits.slice(0, n) }));
    const n = fits.findIndex((_, i) => bytes(i + 1) > NOTICE_MAX_BYTES);
    expect(n).toBeGreaterThan(0);
    expect(decodeDownlinkNotice(encodeDownlinkNotice('hub-a', fits.slice(0, n))).sites).toEqual(
      fits.slice(0, n),
    );
    expect(decodeDownlinkNotice(encodeDownlinkNotice('hub-a', fits.slice(0, n + 1))).sites).toBe('every');
  });

  it('reads a payload it does not understand as every site, never as none', () => {
    const every = { from: null, sites: 'every' };
    for (const garbage of [
      undefined,
      '',
      'ship-7',
      '{"from":"hub-a","sites":',
      'null',
      '42',
      '["ship-7"]',
      '{"sites":[1,2]}',
      '{"sites":"ship-7"}',
      `{"sites":["${'x'.repeat(9000)}"]}`,
    ])
      expect(decodeDownlinkNotice(garbage), String(garbage).slice(0, 40)).toMatchObject({ sites: 'every' });
    expect(decodeDownlinkNotice('{"sites":["ship-7"]}')).toEqual({ from: null, sites: ['ship-7'] });
    expect(decodeDownlinkNotice('{"from":7,"sites":{}}')).toEqual(every);
  });
});
