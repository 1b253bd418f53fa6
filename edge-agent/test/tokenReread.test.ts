import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHopServer, MemoryHopBackend } from '@driftline/hop';
import { tokenFromFile } from '@driftline/hop/client';
import { makeBundle } from '@driftline/hop/testing';
import { encodeBatch } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { HttpUplink } from '../src/adapters/http/HttpUplink.js';
import { memoryUrlStorage } from './helpers/memoryUrlStorage.js';
import { tempDir } from './helpers/storeFixtures.js';

describe("the agent's upstream token file", () => {
  it('is read again when replaced: after a rotation the next push goes with the new token', async () => {
    const backend = new MemoryHopBackend({ name: 'relay-1', role: 'relay' });
    backend.addToken('old-token', { name: 'ship-7', sites: ['ship-7'] });
    const hop = createHopServer(backend, { uploads: { directory: tempDir('driftline-tus-') } });
    const { port } = await hop.listen(0, '127.0.0.1');
    const file = join(tempDir('driftline-token-'), 'token');
    writeFileSync(file, 'old-token\n');
    let t = 0;
    const changes: string[] = [];
    const uplink = new HttpUplink({
      url: `http://127.0.0.1:${port}`,
      // as app.ts wires it, with a test clock so the re-read needs no waiting
      token: tokenFromFile(file, { now: () => t, onChange: (p) => changes.push(p) }),
      urlStorage: memoryUrlStorage(),
    });
    const push = async () => uplink.postBundles(encodeBatch([(await makeBundle()).bytes]));
    try {
      expect((await push()).ok).toBe(true);
      backend.removeToken('old-token');
      backend.addToken('new-token', { name: 'ship-7', sites: ['ship-7'] });
      const refused = await push();
      expect(refused.ok ? null : refused.status).toBe(401);
      writeFileSync(file, 'new-token\n');
      t += 2000;
      expect((await push()).ok).toBe(true);
      expect(changes).toEqual([file]);
    } finally {
      await hop.close();
    }
  });
});
