import type { Clock } from '../../src/ports/Clock.js';

/** A clock the test moves by hand; `advance` runs due timers in order, bounded in count. */
export class ManualClock implements Clock {
  private timers: { at: number; every: number | null; fn: () => void; id: number }[] = [];
  private seq = 0;
  constructor(private t: number) {}

  now() {
    return this.t;
  }
  every(ms: number, fn: () => void) {
    const id = ++this.seq;
    this.timers.push({ at: this.t + ms, every: ms, fn, id });
    return () => this.cancel(id);
  }
  after(ms: number, fn: () => void) {
    const id = ++this.seq;
    this.timers.push({ at: this.t + ms, every: null, fn, id });
    return () => this.cancel(id);
  }
  get pending() {
    return this.timers.length;
  }
  private cancel(id: number) {
    this.timers = this.timers.filter((x) => x.id !== id);
  }
  advance(ms: number) {
    const end = this.t + ms;
    for (let guard = 0; guard < 10_000; guard++) {
      const due = this.timers.filter((x) => x.at <= end).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.t = due.at;
      if (due.every) due.at += due.every;
      else this.cancel(due.id);
      due.fn();
    }
    this.t = end;
  }
}
