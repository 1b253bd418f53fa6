import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The hub and relay programs, run from source as `npm start` does. */
export const BIN = { hub: join(ROOT, 'hub/bin/hub.js'), relay: join(ROOT, 'relay/bin/relay.js') };

/** A program started by a test; its stderr (JSON log lines) goes to `log`. */
export interface Proc {
  child: ChildProcess;
  log: string;
  /** What it logged so far. */
  logs(): string;
}

/** Programs a test started, killed (by their own pid) when it ends. */
export class Procs {
  private readonly all = new Set<ChildProcess>();

  start(bin: string, args: string[], log: string, env: NodeJS.ProcessEnv = {}): Proc {
    const out = createWriteStream(log);
    const child = spawn(process.execPath, [bin, ...args], {
      env: { ...process.env, LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr?.pipe(out);
    this.all.add(child);
    child.once('exit', () => this.all.delete(child));
    return { child, log, logs: () => readFileSync(log, 'utf8') };
  }

  /** Sends `signal` and waits for the exit. */
  async stop(p: Proc, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const c = p.child;
    if (c.exitCode !== null || c.signalCode !== null) return;
    const done = new Promise((r) => c.once('exit', r));
    c.kill(signal);
    await done;
  }

  async stopAll(): Promise<void> {
    for (const c of [...this.all].reverse()) {
      const done = new Promise((r) => c.once('exit', r));
      c.kill('SIGTERM');
      await done;
    }
  }
}

/** One `/api/events` frame as a client reads it. */
export interface SseFrame {
  id: string;
  event: string;
  data: { type: string; run?: { runId: string } };
}

/**
 * A dashboard's live connection: reads `/api/events` (resuming from `lastEventId` when given) into
 * `frames` until the stream ends (`ended`) or `close` is called.
 */
export function openEvents(url: string, authorization: string, lastEventId?: string) {
  const frames: SseFrame[] = [];
  const abort = new AbortController();
  let connected = () => {};
  const open = new Promise<void>((r) => {
    connected = r;
  });
  const ended = (async () => {
    const r = await fetch(`${url}/api/events`, {
      headers: { authorization, ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
      signal: abort.signal,
    });
    if (r.status !== 200 || !r.body) throw new Error(`/api/events answered ${r.status}`);
    connected();
    const decoder = new TextDecoder();
    let buf = '';
    try {
      for await (const chunk of r.body as unknown as AsyncIterable<Uint8Array>) {
        buf += decoder.decode(chunk, { stream: true });
        for (let end = buf.indexOf('\n\n'); end >= 0; end = buf.indexOf('\n\n')) {
          const lines = buf.slice(0, end).split('\n');
          buf = buf.slice(end + 2);
          const field = (k: string) => lines.find((l) => l.startsWith(`${k}: `))?.slice(k.length + 2);
          const id = field('id');
          const data = field('data');
          if (id && data) frames.push({ id, event: field('event') ?? '', data: JSON.parse(data) });
        }
      }
    } catch {
      // cut (the hub died) or closed by the test
    }
  })();
  ended.catch(() => {});
  return {
    frames,
    open,
    ended,
    lastId: () => frames.at(-1)?.id,
    close: () => abort.abort(),
  };
}
