import { spawn } from 'node:child_process';
import { connect as h2connect } from 'node:http2';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { expect, it } from 'vitest';
import { H2_PREFACE } from '../src/http/h2c.js';

/**
 * A client whose connection is reset (a flaky link, a radio that drops, a port scan) before or just after
 * its first bytes, as processes: the hop server drops that connection and goes on serving. The first-bytes
 * switch that puts h2c beside HTTP/1.1 (src/http/h2c.ts) holds each socket before Node's HTTP server or
 * `node:http2` does; with no `error` listener there, the reset was an uncaught error that stopped the whole
 * relay (simulation/test/scenario.test.ts lost a run so: its relay died after a chaos restart).
 */
it('drops a connection reset before its first bytes decide HTTP/1.1 or h2c, and goes on serving both', {
  timeout: 60_000,
}, async () => {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(import.meta.dirname, 'fixtures/serveUntilStdinEnds.ts')],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr += d;
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => {
    const l = await lines.next();
    if (l.done) throw new Error(`the server stopped: ${stderr}`);
    return l.value;
  };
  try {
    const { port } = JSON.parse(await next()) as { port: number };
    // each way a connection can end in a reset: before any byte, mid-preface, after the whole preface
    // (handed to node:http2), mid HTTP/1.1 request line (handed to the HTTP/1.1 server)
    const firsts = [
      '',
      H2_PREFACE.subarray(0, 10).toString('latin1'),
      H2_PREFACE.toString('latin1'),
      'GET /v1/hea',
    ];
    for (const first of firsts) {
      const s: Socket = connect(port, '127.0.0.1');
      s.on('error', () => {});
      await new Promise((r) => s.once('connect', r));
      expect(await next()).toBe('accepted');
      if (first) await new Promise((r) => s.write(first, r));
      s.resetAndDestroy();
      await new Promise((r) => s.once('close', r));
    }
    // still serving, on both protocols
    const h1 = await fetch(`http://127.0.0.1:${port}/v1/health`);
    expect(h1.status).toBe(200);
    await h1.arrayBuffer();
    const h2status = await new Promise<number>((resolve, reject) => {
      const session = h2connect(`http://127.0.0.1:${port}`);
      session.on('error', reject);
      const st = session.request({ ':method': 'GET', ':path': '/v1/health' });
      st.on('response', (h) => {
        st.resume();
        st.on('end', () => {
          session.close();
          resolve(Number(h[':status']));
        });
      });
      st.on('error', reject);
    });
    expect(h2status).toBe(200);
  } finally {
    child.stdin.end();
  }
  expect(await exited, stderr).toBe(0);
  expect(stderr).not.toMatch(/Unhandled 'error' event/);
});
