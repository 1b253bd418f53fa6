import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { wire2SiteId } from '@driftline/hop';
import {
  type BlobManifest,
  cryptoRandomBytes,
  generateSigningKeyPair,
  monotonicUlid,
  wire2,
} from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpUplink } from '../src/adapters/http/HttpUplink.js';
import { openSqliteLedger } from '../src/adapters/sqlite/openSqliteLedger.js';
import { SqliteUrlStorage } from '../src/adapters/tus/SqliteUrlStorage.js';
import { SyncEngine } from '../src/core/sync/SyncEngine.js';
import { TestHub } from './helpers/testHub.js';

/**
 * The hub's compact publication manifest on the agent's downlink (docs/decisions/505-compact-publications.md):
 * taken as v1's signed `blob` manifest when the pinned hub key signed it for this site, refused otherwise.
 */
const cleanup: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0)) await f();
});

describe('compact publication manifests at the agent', () => {
  it('announces a genuine one for its site; refuses a forged or altered one and passes over another site’s', async () => {
    const agentKeys = await generateSigningKeyPair();
    const hub = await TestHub.start(agentKeys.publicKey);
    cleanup.push(() => hub.close());
    const dir = mkdtempSync(join(tmpdir(), 'agent-compact-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const { ledger: store, db } = openSqliteLedger({
      path: join(dir, 'agent.sqlite'),
      site: 'ship-7',
      agent: 'a1',
    });
    cleanup.push(() => store.close());
    const announced: BlobManifest[] = [];
    const warnings: string[] = [];
    const engine = new SyncEngine({
      site: 'ship-7',
      agent: 'a1',
      store,
      uplinks: [new HttpUplink({ url: hub.url, token: 'agent-token', urlStorage: new SqliteUrlStorage(db) })],
      privateKey: agentKeys.privateKey,
      hubPublicKey: hub.keys.publicKey,
      allowsCell: () => false,
      onPlanRequest: () => {},
      newBundleId: monotonicUlid(Date.now, cryptoRandomBytes),
      now: Date.now,
      log: { info: () => {}, warn: (_o, m) => warnings.push(m) },
      siteShortId: wire2SiteId('ship-7'),
      onBlobManifest: (m) => announced.push(m),
    });
    const ids = monotonicUlid(Date.now, cryptoRandomBytes);
    const file = randomBytes(598);
    // git's own header, then bytes: a file whose heads pack (decision 520)
    const gitFile = Buffer.concat([
      Buffer.from(`# v2 git bundle\n-${'a1'.repeat(20)} main\n${'b2'.repeat(20)} refs/heads/pr/1\n\n`),
      randomBytes(480),
    ]);
    const message = async (o: { site?: string; key?: CryptoKey; id?: string; packed?: boolean }) => {
      const body = wire2.publicationBody({
        publicationId: o.id ?? ids(),
        name: 'infra',
        fileKind: 'git',
        sha256: '',
        size: file.length,
        expiresAt: Date.now() + 3_600_000,
        inline: o.packed ? gitFile : file,
        packGitHeads: o.packed === true,
      });
      if (!body) throw new Error('no compact form');
      return wire2.encodeMessage(
        { kind: 'publication', from: 0, to: wire2SiteId(o.site ?? 'ship-7'), seq: 1, body },
        o.key ?? hub.keys.privateKey,
      );
    };
    const forger = await generateSigningKeyPair();
    hub.backend.enqueueDownlink('ship-7', await message({ key: forger.privateKey }));
    // one byte of the carried file flipped on the way: the signature covers it
    const altered = Buffer.from(await message({}));
    const at = altered.indexOf(file);
    expect(at).toBeGreaterThan(0);
    altered[at + 100] = (altered[at + 100] as number) ^ 0xff;
    hub.backend.enqueueDownlink('ship-7', altered);
    // ship-8's genuine manifest, replayed into ship-7's downlink by a relay
    hub.backend.enqueueDownlink('ship-7', await message({ site: 'ship-8' }));
    const genuine = ids();
    hub.backend.enqueueDownlink('ship-7', await message({ id: genuine }));
    // with its heads packed: announced as the very file git wrote; one byte of the packed heads altered
    // on the way is refused as any altered byte is
    const packed = await message({ packed: true });
    expect(wire2.decodeMessage(packed)).toMatchObject({
      ok: true,
      value: { body: { gitHeads: expect.anything() } },
    });
    const alteredHeads = Buffer.from(await message({ packed: true }));
    const headsAt = alteredHeads.indexOf(Buffer.from('a1'.repeat(20), 'hex'));
    expect(headsAt).toBeGreaterThan(0);
    alteredHeads[headsAt] = 0xa2;
    hub.backend.enqueueDownlink('ship-7', alteredHeads);
    hub.backend.enqueueDownlink('ship-7', packed);

    const r = await engine.pullOnce();
    expect(r.refused).toBe(3);
    expect(announced).toHaveLength(2);
    expect(announced[1]).toMatchObject({
      size: gitFile.length,
      sha256: createHash('sha256').update(gitFile).digest('hex'),
    });
    expect(Buffer.from(announced[1]?.inline ?? []).equals(gitFile)).toBe(true);
    expect(announced[0]).toMatchObject({
      bundleId: genuine,
      name: 'infra',
      fileKind: 'git',
      size: 598,
      sha256: createHash('sha256').update(file).digest('hex'),
    });
    expect(Buffer.from(announced[0]?.inline ?? []).equals(file)).toBe(true);
    expect(warnings.filter((w) => w.includes('downlink publication refused: not signed'))).toHaveLength(3);
    expect(warnings).toContain('downlink publication passed over: it names another site');
  });
});
