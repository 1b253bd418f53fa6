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
  /**
   * The first log line matching `re` (one already logged counts): waits on the program's own output,
   * and rejects, with its last lines, if it exits first.
   */
  said(re: RegExp): Promise<string>;
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
    let text = '';
    let exited = false;
    const waiting = new Set<() => void>();
    const wake = () => {
      for (const w of [...waiting]) w();
    };
    child.stderr?.on('data', (d: Buffer) => {
      text += d.toString();
      wake();
    });
    this.all.add(child);
    child.once('exit', () => this.all.delete(child));
    // after its output is read to the end: a line logged just before the exit still counts
    child.once('close', () => {
      exited = true;
      wake();
    });
    const said = (re: RegExp) =>
      new Promise<string>((resolve, reject) => {
        const check = () => {
          const line = text.split('\n').find((l) => re.test(l));
          if (line === undefined && !exited) return;
          waiting.delete(check);
          if (line !== undefined) resolve(line);
          else reject(new Error(`${bin} exited before logging ${re}: ${text.slice(-2000)}`));
        };
        waiting.add(check);
        check();
      });
    return { child, log, logs: () => readFileSync(log, 'utf8'), said };
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
  // `next()`'s waiters: told of each frame, and of the end
  let waiters: Array<{ resolve: () => void; reject: (e: Error) => void }> = [];
  let over = false;
  const tell = (end: boolean) => {
    const now = waiters;
    waiters = [];
    for (const w of now) end ? w.reject(new Error(`the events of ${url} ended`)) : w.resolve();
  };
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
          if (id && data) {
            frames.push({ id, event: field('event') ?? '', data: JSON.parse(data) });
            tell(false);
          }
        }
      }
    } catch {
      // cut (the hub died) or closed by the test
    }
  })();
  ended
    .catch(() => {})
    .finally(() => {
      over = true;
      tell(true);
    });
  return {
    frames,
    open,
    ended,
    lastId: () => frames.at(-1)?.id,
    /** Resolves with the next frame's arrival; rejects once the stream has ended. */
    next: () =>
      new Promise<void>((resolve, reject) => {
        if (over) reject(new Error(`the events of ${url} ended`));
        else waiters.push({ resolve, reject });
      }),
    close: () => abort.abort(),
  };
}
