import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { listenersOf, parseConfig } from './config.js';

const parse = (raw: object) => parseConfig(raw, '/etc/driftline', {});

describe('hub config', () => {
  it('listens on one address by default and on two when listen.hop and listen.api are set', () => {
    const one = parse({});
    if (!one.ok) throw new Error(one.errors.join('; '));
    expect(listenersOf(one.config)).toEqual({ shared: { host: '127.0.0.1', port: 8080 } });
    expect(one.config.api).toMatchObject({ public: false, sessionTtlH: 12, rateLimit: { perMinute: 600 } });
    expect(one.config.api.maxUploadBytes).toBe(2 * 1024 ** 3);
    const two = parse({ listen: { hop: { host: '0.0.0.0', port: 8443 }, api: { port: 8081 } } });
    if (!two.ok) throw new Error(two.errors.join('; '));
    expect(listenersOf(two.config)).toEqual({
      hop: { host: '0.0.0.0', port: 8443 },
      api: { host: '127.0.0.1', port: 8081 },
    });
  });

  it('refuses an SSO header without proxies, proxies without a header, and a bad proxy address', () => {
    const noProxies = parse({ api: { sso: { header: 'X-Forwarded-User' } } });
    expect(!noProxies.ok && noProxies.errors[0]).toContain('api.sso.proxies');
    const noHeader = parse({ api: { sso: { proxies: ['10.0.0.1'] } } });
    expect(!noHeader.ok && noHeader.errors[0]).toContain('api.sso.header');
    const bad = parse({ api: { sso: { header: 'X-Forwarded-User', proxies: ['proxy.example.org'] } } });
    expect(!bad.ok && bad.errors[0]).toContain('api.sso.proxies[0]: expected an IP address or CIDR');
    expect(parse({ api: { sso: { header: 'X-Forwarded-User', proxies: ['10.0.0.0/8'] } } }).ok).toBe(true);
    expect(parse({ api: { unknown: 1 } }).ok).toBe(false);
    expect(parse({ listen: { host: '::', port: 1, hop: { port: 2 } } }).ok).toBe(false);
  });

  it('resolves dataDir and uiDir from the config folder, and defaults uiDir to the dashboard shipped with the hub', () => {
    const c = parse({});
    if (!c.ok) throw new Error(c.errors.join('; '));
    expect(c.config.dataDir).toBe('/etc/driftline/hub-data');
    expect(c.config.uiDir).toBe(fileURLToPath(new URL('../../ui/dist', import.meta.url)));
    const set = parse({ dataDir: 'state', uiDir: '../www/dashboard' });
    if (!set.ok) throw new Error(set.errors.join('; '));
    expect(set.config).toMatchObject({ dataDir: '/etc/driftline/state', uiDir: '/etc/www/dashboard' });
  });
});
