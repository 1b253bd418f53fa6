import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * A TCP port free on 127.0.0.1 right now, for a program started next that must be told its port. Picked
 * at random below the kernel's ephemeral range where that range leaves room: a port from `listen(0)` is
 * one the kernel also hands to outgoing connections and to every other test's `listen(0)`, so it could
 * be taken in the seconds before the program binds it (it was, once in CI: 60 s of 502).
 */
export async function freePort(): Promise<number> {
  const low = ephemeralLow();
  if (low !== null && low > 12_000) {
    for (let i = 0; i < 50; i++) {
      const port = 10_000 + Math.floor(Math.random() * (low - 10_000));
      if (!FETCH_BAD_PORTS.has(port) && (await canBind(port))) return port;
    }
  }
  return bindAny();
}

/**
 * Ports in this range that fetch refuses to connect to (the Fetch standard's "bad ports"): a program on one
 * could not be reached by the tests' own fetch ("fetch failed" for 60 s, once in CI on 10080).
 */
const FETCH_BAD_PORTS = new Set([10080]);

function ephemeralLow(): number | null {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) ? low : null;
  } catch {
    return null; // not Linux: the kernel's choice
  }
}

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

function bindAny(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Polls `url` until it answers 2xx or `ms` pass. */
export async function waitForHttp(url: string, ms: number, alive: () => boolean = () => true): Promise<void> {
  const end = Date.now() + ms;
  let last = '';
  while (Date.now() < end) {
    if (!alive()) throw new Error(`process behind ${url} exited before it was ready`);
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (r.ok) return;
      last = `HTTP ${r.status}`;
    } catch (e) {
      last = (e as Error).message;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} not ready after ${ms} ms (${last})`);
}
