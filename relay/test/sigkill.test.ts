import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BATCH_CONTENT_TYPE, encodeBatch } from '@driftline/protocol';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../src/app.js';
import { makeBundle, startTerminal, tmp, until } from './helpers.js';

const bin = fileURLToPath(new URL('../bin/relay.js', import.meta.url));

function startProcess(config: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [bin, 'run', '--config', config, '--json'], {
    env: { ...process.env, LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`relay did not start: ${out}`)), 20_000);
    child.stdout?.on('data', (d) => {
      out += d;
      const m = /"listening":"([^"]+)"/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1] as string });
      }
    });
    child.once('exit', (code) => reject(new Error(`relay exited ${code}: ${out}`)));
  });
}

const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
});

describe('SIGKILL during receipt and forwarding', () => {
  it('loses no receipted bundle and stores none twice at the terminal', async () => {
    const term = await startTerminal();
    const dataDir = tmp('relay-kill-');
    const config = join(dataDir, 'relay.yaml');
    writeFileSync(
      config,
      JSON.stringify({
        name: 'relay-k',
        dataDir,
        listen: { port: 0 },
        upstreams: [{ url: term.url, token: term.token }],
        forward: { idleMs: 50, backoffBaseMs: 10, backoffMaxMs: 100, batchCount: 7 },
      }),
    );
    const { custody, tokens } = openStore({ dataDir, storage: {} });
    const token = tokens.add('ship-7', ['ship-7']);
    custody.close();

    const receipted = new Set<string>();
    const rounds = 6;
    for (let round = 0; round < rounds; round++) {
      const { child, url } = await startProcess(config);
      children.push(child);
      // several senders at once, killed part-way: some answers never come, and that is allowed
      const killAfter = 3 + round * 2;
      let answered = 0;
      const senders = Array.from({ length: 4 }, async () => {
        for (let i = 0; i < 20; i++) {
          const batch = await Promise.all(Array.from({ length: 5 }, () => makeBundle()));
          try {
            const r = await fetch(`${url}/v1/bundles`, {
              method: 'POST',
              headers: { authorization: `Bearer ${token}`, 'content-type': BATCH_CONTENT_TYPE },
              body: encodeBatch(batch.map((b) => b.bytes)) as BodyInit,
            });
            const j = (await r.json()) as { receipts: { bundleId: string; status: string }[] };
            for (const rc of j.receipts) if (rc.status !== 'rejected') receipted.add(rc.bundleId);
            if (++answered === killAfter) child.kill('SIGKILL');
          } catch {
            return; // killed mid-request
          }
        }
      });
      await Promise.all(senders);
      if (child.exitCode === null) child.kill('SIGKILL');
      await new Promise((r) =>
        child.exitCode !== null || child.signalCode ? r(null) : child.once('exit', r),
      );
    }
    // a last, uninterrupted run drains custody
    const { child } = await startProcess(config);
    children.push(child);
    expect(receipted.size).toBeGreaterThan(50);
    await until(
      () => [...receipted].every((id) => term.backend.stored.has(id)),
      30_000,
      'every receipted bundle',
    );
    const dupArrivals = [...term.backend.arrivals.values()].filter((n) => n > 1).length;
    console.info(
      JSON.stringify({
        rounds,
        receipted: receipted.size,
        atTerminal: term.backend.stored.size,
        dupArrivals,
      }),
    );
    // the terminal stored each id once (duplicates are answered `duplicate`, D2)
    expect(term.backend.stored.size).toBeGreaterThanOrEqual(receipted.size);
    child.kill('SIGKILL');
    await term.hop.close();
  }, 120_000);
});
