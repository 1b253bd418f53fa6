import FakeTimers, { type Clock as InstalledClock } from '@sinonjs/fake-timers';
import { IdleWatch } from './idle.js';

/**
 * Quiet turns of the event loop in a row before the process counts as idle. A turn is quiet when no real work
 * is under way and no `setImmediate` is waiting. Microtasks and `nextTick`s drain completely after each
 * callback, so whatever the previous turn's stragglers start is either done by the next look or shows
 * there as an immediate or as real work: two quiet looks mean nothing is left at this instant. (It was six
 * looks that did not see immediates: 19 turns of the loop an event, most of them of an empty loop.)
 */
const QUIET_TURNS = 2;
/** Real milliseconds the world waits for a request's callback before it looks again anyway. */
const REQUEST_BACKSTOP_MS = 5;
/** Turns of the event loop one instant may spend busy before the world waits in real milliseconds. */
const SPIN_TURNS = 2_000;
/**
 * Waits of a millisecond or more (real time) one instant may stay busy with real work before the world says
 * it never settles: at least two minutes, for a child process that does not end. A hang detector, not a
 * timing: the test's own timeout is longer, and this names what is still under way.
 */
const BUSY_WAITS_LIMIT = 120_000;
/** Timers one step may fire at most before the world says it is looping (a timer that re-arms at 0 ms). */
const LOOP_LIMIT = 1_000_000;

/**
 * The world's one clock (docs/decisions/540-deterministic-world.md). While installed it is every node's
 * `Date`, `setTimeout`/`setInterval`, `performance.now` and `AbortSignal.timeout`: the services read time
 * the ordinary way and get virtual time. Time moves only in {@link step}: once the process is idle (no
 * microtask, no real file or crypto work: {@link IdleWatch}), the clock jumps to the next due timer and
 * fires it. A week of a fleet is as many steps as it has events, not a week.
 *
 * `setImmediate`, `process.nextTick` and microtasks stay real: they are how work within one instant is
 * carried, and the world waits for them to drain before it moves.
 */
export class VirtualTime {
  private clock: InstalledClock | null = null;
  private readonly idle = new IdleWatch();
  private readonly realImmediate = setImmediate;
  private readonly realTimeout = setTimeout;
  private readonly realClearTimeout = clearTimeout;
  /** A timer of the machine (the world's clock replaces `setTimeout`); answers its cancel. */
  private readonly realTimer = (fn: () => void, ms: number) => {
    const t = this.realTimeout(fn, ms);
    return () => this.realClearTimeout(t);
  };
  private savedTimeout: typeof AbortSignal.timeout | null = null;
  private savedDate: DateConstructor | null = null;
  /** Timers fired so far (the world's step count). */
  steps = 0;
  private driving: Promise<void> | null = null;
  private driven = false;
  private driveError: Error | null = null;

  /** @param busyWaitsLimit waits for real work one instant may take before the world says it never settles */
  constructor(private readonly busyWaitsLimit = BUSY_WAITS_LIMIT) {}

  /** Installs the clock at `startMs` (ms since the epoch). Call {@link uninstall} when the world ends. */
  install(startMs: number): void {
    if (this.clock) throw new Error('the world clock is already installed');
    const clock = FakeTimers.withGlobal(globalThis).install({
      now: startMs,
      toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance'],
      loopLimit: LOOP_LIMIT,
    });
    this.clock = clock;
    // `Date` is the world's own, not fake-timers' (a subclass that defines a property on every instance):
    // the nodes make a Date at every stamp and ISO string, and that one cost a world 2 % of its time.
    this.savedDate = globalThis.Date;
    globalThis.Date = worldDate(this.savedDate, () => clock.now);
    // AbortSignal.timeout runs on Node's own timers, which no fake reaches: rebuilt on the world's.
    this.savedTimeout = AbortSignal.timeout;
    AbortSignal.timeout = (ms: number) => {
      const c = new AbortController();
      const t = setTimeout(
        () => c.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
        ms,
      );
      c.signal.addEventListener('abort', () => clearTimeout(t), { once: true });
      return c.signal;
    };
    this.idle.start();
  }

  uninstall(): void {
    this.driven = false;
    this.idle.stop();
    if (this.savedTimeout) AbortSignal.timeout = this.savedTimeout;
    this.savedTimeout = null;
    if (this.savedDate) globalThis.Date = this.savedDate;
    this.savedDate = null;
    this.clock?.uninstall();
    this.clock = null;
  }

  /** Virtual now, ms since the epoch. */
  now(): number {
    return this.installed().now;
  }

  /**
   * Waits (in real time, briefly) until nothing is left to do at this instant. While real work is under way
   * (a signature in libuv's pool, a file, a child process) it turns the event loop a while (most such work
   * ends within a few turns), then sleeps a real millisecond at a time, so a long wait (a child process)
   * does not take a core from the very work it waits for.
   */
  async settle(): Promise<void> {
    let quiet = 0;
    let busyWaits = 0;
    let busyTurns = 0;
    while (quiet < QUIET_TURNS) {
      await new Promise<void>((r) => this.realImmediate(r));
      if (this.idle.busy().length === 0 && !immediateWaiting()) quiet++;
      else if (this.idle.requestsUnderway()) {
        // a file or crypto request in libuv's pool: wait for its callback rather than turn the loop
        quiet = 0;
        if (
          !(await this.idle.nextDone(REQUEST_BACKSTOP_MS, this.realTimer)) &&
          ++busyWaits > this.busyWaitsLimit
        )
          throw new Error(this.neverIdle());
      } else {
        quiet = 0;
        // most real work (a signature, a small file) ends within a few turns: those stay turns
        if (++busyTurns <= SPIN_TURNS) continue;
        if (++busyWaits > this.busyWaitsLimit) throw new Error(this.neverIdle());
        await new Promise<void>((r) => this.realTimeout(r, 1));
      }
    }
  }

  private neverIdle(): string {
    const all = process.getActiveResourcesInfo().join(', ');
    return `the world is never idle: after ${this.busyWaitsLimit} waits for real work still ${this.idle.busy().join(', ')} (a child process that does not end, or work that re-arms itself; the process holds ${all})`;
  }

  /** When the next timer is due (virtual ms since the epoch), or null when none is set. */
  nextDue(): number | null {
    // fake-timers keeps its timers in a min-heap by due time (`timerHeap`, O(1) to peek)
    const heap = (this.installed() as unknown as { timerHeap?: { peek(): { callAt: number } | undefined } })
      .timerHeap;
    return heap?.peek()?.callAt ?? null;
  }

  /**
   * One step: settle, then fire the next timer if it is due by `limit`; else move the clock to `limit`.
   * Returns whether a timer fired.
   */
  async step(limit = Number.POSITIVE_INFINITY): Promise<boolean> {
    const clock = this.installed();
    await this.settle();
    const due = this.nextDue();
    if (due === null || due > limit) {
      if (Number.isFinite(limit) && limit > clock.now) clock.tick(limit - clock.now);
      return false;
    }
    clock.next();
    this.steps++;
    await this.settle();
    return true;
  }

  /** Runs every event due in the next `ms` of virtual time; the clock ends exactly `ms` later. */
  async run(ms: number, onStep?: () => void): Promise<void> {
    const end = this.now() + ms;
    while (await this.step(end)) onStep?.();
  }

  /**
   * Runs until `done()` holds (checked after each event) or `withinMs` of virtual time has passed; returns
   * whether it held. Virtual time, never a wall-clock deadline: the same seed ends at the same instant.
   */
  async until(done: () => boolean, withinMs: number, onStep?: () => void): Promise<boolean> {
    const end = this.now() + withinMs;
    await this.settle();
    while (!done()) {
      if (!(await this.step(end))) return done();
      onStep?.();
    }
    return true;
  }

  /**
   * Moves time by itself, whenever the process is idle, until {@link stopDriving}: code that waits with
   * ordinary timers (a test's poll, `setTimeout(r, 250)`) then waits in virtual time, and a deadline it
   * reads from `Date.now()` is virtual too. What one instant holds still runs to its end before time moves.
   */
  drive(onStep?: () => void): void {
    if (this.driving) return;
    this.driven = true;
    this.driving = (async () => {
      try {
        while (this.driven && this.clock) {
          if (await this.step()) onStep?.();
          // nothing due at all: only something from outside (a socket, a child process) can bring work;
          // look again in a real millisecond rather than spin a core the outside work needs
          else await new Promise<void>((r) => this.realTimeout(r, 1));
        }
      } catch (e) {
        // uninstalled under a step: the world is over; anything else is the world's failure to report
        if (!this.clock) return;
        this.driveError = e as Error;
        // ...and time still moves, a timer a real millisecond, without waiting for the process to be idle:
        // every wait bounded in virtual time then ends (a test's `until` throws), so a world that cannot
        // settle (a child process that never ends) fails its test instead of holding it forever; the lane
        // has no wall-clock deadline (decision 540), and stopDriving throws the cause
        while (this.driven && this.clock) {
          if (this.nextDue() !== null) this.clock.next();
          await new Promise<void>((r) => this.realTimeout(r, 1));
        }
      }
    })();
  }

  /** Stops {@link drive}; resolves once its last step is over, and throws what stopped it, if anything. */
  async stopDriving(): Promise<void> {
    this.driven = false;
    await this.driving;
    this.driving = null;
    const e = this.driveError;
    this.driveError = null;
    if (e) throw e;
  }

  private installed(): InstalledClock {
    if (!this.clock) throw new Error('the world clock is not installed (VirtualTime.install first)');
    return this.clock;
  }
}

/**
 * The world's `Date`: the machine's, read at virtual `now()` when made without arguments, and `Date.now()`.
 * Its dates are the machine's own (`instanceof Date`, `constructor === Date` of the machine, as fake-timers'
 * are); called as a function it gives the virtual instant's string, as `Date()` does.
 */
function worldDate(Native: DateConstructor, now: () => number): DateConstructor {
  function WorldDate(this: unknown, ...args: unknown[]): unknown {
    if (new.target === undefined) return new Native(now()).toString();
    const a = (args.length === 0 ? [now()] : args) as ConstructorParameters<DateConstructor>;
    return new.target === WorldDate ? new Native(...a) : Reflect.construct(Native, a, new.target);
  }
  const d = WorldDate as unknown as DateConstructor & { now: () => number };
  Object.defineProperties(d, {
    prototype: { value: Native.prototype },
    now: { value: () => now(), writable: true, configurable: true },
    parse: { value: Native.parse, writable: true, configurable: true },
    UTC: { value: Native.UTC, writable: true, configurable: true },
  });
  return d;
}

/** A `setImmediate` of a node is waiting (ref'd; the world's own look is not, being under way). */
const immediateWaiting = () => process.getActiveResourcesInfo().includes('Immediate');
