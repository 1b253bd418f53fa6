import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configWarnings, loadConfigFile, parseConfig, resolveUpstreams } from './config.js';

const BASE = { name: 'relay-1', dataDir: './data', listen: { port: 7000 } };

describe('relay config', () => {
  it('resolves dataDir and token files from the folder of the config file, not the working directory', () => {
    const dir = mkdtempSync(join(tmpdir(), 'relay-cfg-'));
    writeFileSync(join(dir, 'up.token'), 'tok\n');
    writeFileSync(
      join(dir, 'relay.yaml'),
      'name: relay-1\ndataDir: ./data\nlisten: { port: 7000 }\nsites: [ship-7]\nupstreams: [{ url: "http://127.0.0.1:8443/", tokenFile: ./up.token }]\n',
    );
    const r = loadConfigFile(join(dir, 'relay.yaml'));
    if (!r.ok) throw new Error(r.errors.join('; '));
    expect(r.value.dataDir).toBe(join(dir, 'data'));
    expect(r.value.upstreams[0]?.tokenFile).toBe(join(dir, 'up.token'));
    expect(r.value.upstreams[0]?.contact).toEqual({ windows: [], oldSpellings: [] });
    const ups = resolveUpstreams(r.value, {});
    expect(ups.ok && ups.value).toEqual([
      { name: '127.0.0.1:8443', url: 'http://127.0.0.1:8443', token: 'tok', plan: { windows: [] } },
    ]);
    expect(configWarnings(r.value)).toEqual([]);
  });

  it('says an empty token file is a problem, by key path', () => {
    const dir = mkdtempSync(join(tmpdir(), 'relay-cfg-'));
    writeFileSync(join(dir, 'empty.token'), '\n');
    const r = parseConfig({ ...BASE, upstreams: [{ url: 'http://h:1', tokenFile: './empty.token' }] }, dir);
    if (!r.ok) throw new Error(r.errors.join('; '));
    const ups = resolveUpstreams(r.value, {});
    expect(!ups.ok && ups.errors).toEqual([
      expect.stringMatching(/^upstreams\[0\]\.tokenFile: .*empty\.token is empty/),
    ]);
  });

  it('warns that a relay without sites holds no downlink, naming what will not reach agents', () => {
    const r = parseConfig({ ...BASE, upstreams: [{ url: 'http://h:1', token: 't' }] }, '/etc/driftline');
    if (!r.ok) throw new Error(r.errors.join('; '));
    const [w, ...more] = configWarnings(r.value);
    expect(more).toEqual([]);
    expect(w).toMatch(/^sites is empty: this relay holds no downlink/);
    for (const what of ['acks', 'plan requests', 'publications', 'approvals']) expect(w).toContain(what);
    const none = parseConfig(BASE, '/etc/driftline');
    expect(none.ok && configWarnings(none.value)).toEqual([
      expect.stringMatching(/^sites is empty/),
      expect.stringMatching(/^upstreams is empty: bundles taken into custody here are never forwarded/),
    ]);
  });

  it('reads contact windows in the syntax of hub and agent, and the older { cron, durationMinutes } with a warning', () => {
    const up = (windows: unknown[]) => ({
      ...BASE,
      sites: ['ship-7'],
      upstreams: [{ url: 'http://h:1', token: 't', contact: { windows } }],
    });
    const now = parseConfig(
      up(['0 */2 * * * for 10m', 'every 90m for 8m from 2026-11-27T00:00:00Z']),
      '/etc',
    );
    if (!now.ok) throw new Error(now.errors.join('; '));
    expect(now.value.upstreams[0]?.contact.windows.map((w) => w.kind)).toEqual(['cron', 'every']);
    expect(configWarnings(now.value)).toEqual([]);
    const old = parseConfig(up([{ cron: '0 6 * * 7', durationMinutes: 15 }]), '/etc');
    if (!old.ok) throw new Error(old.errors.join('; '));
    expect(old.value.upstreams[0]?.contact.windows).toEqual([
      expect.objectContaining({ kind: 'cron', durationMs: 15 * 60_000 }),
    ]);
    expect(configWarnings(old.value)).toEqual([
      "upstreams[0].contact.windows: { cron, durationMinutes } is deprecated (decision 431); write '0 6 * * 7 for 15m' (the window syntax of hub and agent), read as such for now",
    ]);
    const ups = resolveUpstreams(old.value, {});
    expect(ups.ok && Object.keys(ups.value[0]?.plan ?? {})).toEqual(['windows']);
    const bad = parseConfig(up(['61 * * * * for 5m', 'when the satellite is up']), '/etc');
    expect(!bad.ok && bad.errors).toEqual([
      expect.stringMatching(/^upstreams\[0\]\.contact\.windows\[0\]: .*minute/),
      expect.stringMatching(/^upstreams\[0\]\.contact\.windows\[1\]: .*is not/),
    ]);
  });

  it('reads bundles:, the name of publications: before decision 170, with a warning', () => {
    const up = { sites: ['ship-7'], upstreams: [{ url: 'http://h:1', token: 't' }] };
    const old = parseConfig({ ...BASE, ...up, bundles: { chunkBytes: 4096 } }, '/etc/driftline');
    if (!old.ok) throw new Error(old.errors.join('; '));
    expect(old.value.publications).toEqual({
      quotaBytes: 20 * 1024 ** 3,
      chunkBytes: 4096,
      intervalMs: 5000,
    });
    expect(configWarnings(old.value)).toEqual([
      expect.stringMatching(/^bundles: is deprecated .*publications:/),
    ]);
    const now = parseConfig({ ...BASE, ...up, publications: { chunkBytes: 4096 } }, '/etc/driftline');
    expect(now.ok && [now.value.publications.chunkBytes, configWarnings(now.value)]).toEqual([4096, []]);
    const both = parseConfig({ ...BASE, ...up, publications: {}, bundles: {} }, '/etc/driftline');
    expect(!both.ok && both.errors).toEqual([
      expect.stringMatching(/^bundles: is the old name of publications:/),
    ]);
  });
});
