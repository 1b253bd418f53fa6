import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import * as A from '@automerge/automerge';
import {
  exportPrivateKeyPem,
  exportPublicKeyPem,
  generateSigningKeyPair,
  plainAgentDoc,
} from '@driftline/protocol';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers/storeFixtures.js';
import { TestHub } from './helpers/testHub.js';

const child = fileURLToPath(new URL('./helpers/crashChild.ts', import.meta.url));
const root = fileURLToPath(new URL('../../', import.meta.url));

/** Runs the child until `killAfterLines` commits were printed (then SIGKILL), or to its end. */
function runChild(env: Record<string, string>, killAfterLines: number | null): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--import', 'tsx', child], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: string[] = [];
    let buf = '';
    let err = '';
    const guard = setTimeout(() => p.kill('SIGKILL'), 60_000);
    p.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      const parts = buf.split('\n');
      buf = parts.pop() ?? '';
      lines.push(...parts);
      if (killAfterLines !== null && lines.length >= killAfterLines) p.kill('SIGKILL');
    });
    p.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    p.on('error', reject);
    p.on('exit', (code, signal) => {
      clearTimeout(guard);
      if (signal === 'SIGKILL' || code === 0) resolve(lines);
      else reject(new Error(`child exited ${code}: ${err.slice(-2000)}`));
    });
  });
}

let hub: TestHub;
afterAll(() => hub?.close());

describe('agent crash safety', () => {
  it('loses no committed run and delivers none twice across repeated SIGKILLs while recording and pushing', {
    timeout: 180_000,
  }, async () => {
    const agent = await generateSigningKeyPair();
    hub = await TestHub.start(agent.publicKey);
    const env = {
      DIR: tempDir(),
      HUB: hub.url,
      AGENT_KEY: await exportPrivateKeyPem(agent.privateKey),
      HUB_KEY: await exportPublicKeyPem(hub.keys.publicKey),
      LOG_LEVEL: 'silent',
    };
    const committed = new Set<string>();
    let confirmations = 0;
    const kills = 6;
    for (let k = 0; k < kills; k++) {
      // Kill after a varying number of commits: sometimes mid-record, sometimes mid-push.
      const lines = await runChild(env, 3 + ((k * 7) % 11));
      for (const l of lines) {
        const [word, id, kind] = l.split(' ');
        if (word === 'committed' && kind === 'new') committed.add(id as string);
        if (word === 'committed' && kind === 'unchanged') confirmations++;
      }
      await hub.processArrivals(); // the hub acks what reached it, in between crashes
    }
    expect(committed.size).toBeGreaterThan(kills * 2);
    expect(confirmations).toBeGreaterThan(0);
    const drained = await runChild({ ...env, MODE: 'drain' }, null);
    expect(drained.at(-1)).toBe('drained 0');
    await hub.processArrivals();

    // Every run committed at the agent reached the hub's replicas, each exactly once.
    const atHub: string[] = [];
    for (const replica of hub.replicas.values()) {
      const doc = plainAgentDoc(A.toJS(replica)) as { runs?: Record<string, unknown> };
      atHub.push(...Object.keys(doc.runs ?? {}));
    }
    expect(new Set(atHub).size).toBe(atHub.length);
    for (const id of committed) expect(atHub).toContain(id);
    expect(hub.rejected).toEqual([]);
  });
});
