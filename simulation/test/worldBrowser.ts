import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { BrowserCommand, RegExpSource, Target } from './browserSide.js';

/** What to look at: an element by its role and accessible name, or a row of it by its own. */
export interface Look {
  role: string;
  name?: RegExp;
  row?: { role: string; name: RegExp };
}

/** A RegExp as the browser side reads it (JSON has none). */
const rx = (r: RegExp): RegExpSource => ({ source: r.source, flags: r.flags });

const target = (l: Look): Target => ({
  role: l.role,
  ...(l.name ? { name: rx(l.name) } : {}),
  ...(l.row ? { row: { role: l.row.role, name: rx(l.row.name) } } : {}),
});

/**
 * A world test's browser at headquarters (docs/decisions/540-deterministic-world.md): Chromium in a process
 * of its own ({@link ./browserSide.ts}), asked one thing at a time. The process is unref'd, so the world's
 * idle check (which waits for child processes a node starts) does not wait for it; the world stands still
 * while the browser looks, and each look sets the page's clock to the world's instant.
 */
export class WorldBrowser {
  private next = 1;
  private readonly waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  private stderr = '';

  private constructor(private readonly child: ChildProcess) {
    if (!child.stdout) throw new Error('the browser side has no stdout');
    createInterface({ input: child.stdout }).on('line', (line) => {
      let answer: { id: number; ok: boolean; value?: unknown; error?: string };
      try {
        answer = JSON.parse(line);
      } catch {
        return;
      }
      const w = this.waiting.get(answer.id);
      this.waiting.delete(answer.id);
      if (answer.ok) w?.resolve(answer.value);
      else w?.reject(new Error(answer.error));
    });
    child.stderr?.on('data', (d: Buffer) => {
      this.stderr = (this.stderr + d.toString()).slice(-4000);
    });
    child.on('exit', (code, signal) => {
      for (const w of this.waiting.values())
        w.reject(new Error(`the browser side ended (${code ?? signal}): ${this.stderr}`));
      this.waiting.clear();
    });
  }

  static start(): WorldBrowser {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', new URL('./browserSide.ts', import.meta.url).pathname],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    child.unref();
    return new WorldBrowser(child);
  }

  private ask<T>(command: BrowserCommand): Promise<T> {
    const id = this.next++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.child.stdin?.write(`${JSON.stringify({ id, ...command })}\n`);
    });
  }

  /** Opens `url` with the page's clock at the world's now. */
  open(url: string): Promise<string> {
    return this.ask({ op: 'open', url, nowMs: Date.now() });
  }

  /** The target's text once it matches `matches` (the page's own updates, up to `timeoutMs` real ms). */
  text(look: Look, matches: RegExp, timeoutMs = 30_000): Promise<string> {
    return this.ask({ op: 'text', nowMs: Date.now(), target: target(look), matches: rx(matches), timeoutMs });
  }

  /** The texts of the target's `item`s once they are exactly `equal`, one pattern each, in order. */
  texts(look: Look, item: string, equal: RegExp[], timeoutMs = 30_000): Promise<string[]> {
    return this.ask({
      op: 'texts',
      nowMs: Date.now(),
      target: target(look),
      item,
      equal: equal.map(rx),
      timeoutMs,
    });
  }

  count(css: string, hasText: string): Promise<number> {
    return this.ask({ op: 'count', css, hasText });
  }

  url(): Promise<string> {
    return this.ask({ op: 'url' });
  }

  screenshot(path: string): Promise<string> {
    return this.ask({ op: 'screenshot', path });
  }

  /** Closes the browser and its process. */
  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const ended = new Promise<void>((r) => this.child.once('exit', () => r()));
    this.child.stdin?.end();
    await ended;
  }
}
