import { Worker } from 'node:worker_threads';
import type { MergeInput, MergeOutput } from '../../core/mergeDoc.js';
import type { Merger, ThreadMemory } from '../../ports/Merger.js';

interface Slot {
  worker: Worker;
  ready: Promise<void>;
  jobs: Map<number, { resolve: (o: MergeOutput) => void; reject: (e: Error) => void }>;
  /** Memory asked for (not counted as jobs). */
  asks: Map<number, (m: ThreadMemory | null) => void>;
}

/**
 * Worker threads that merge agent documents, so that Automerge's work (about half of an ingest) runs
 * on other cores than the hub's SQLite and HTTP, and each worker has its own WebAssembly heap: a
 * worker whose Automerge module dies fails only its jobs and is replaced.
 */
export class MergePool implements Merger {
  private readonly slots: Slot[] = [];
  private next = 0;
  private closed = false;
  /** Set when a worker died before it could take jobs: respawning would only loop. */
  private broken: Error | null = null;

  constructor(
    readonly size: number,
    private readonly onError: (e: Error) => void = () => {},
  ) {
    if (!Number.isInteger(size) || size < 1)
      throw new Error(`MergePool needs at least one worker, not ${size}`);
    for (let i = 0; i < size; i++) this.slots.push(this.spawn());
  }

  /** Posts the job to the worker with the fewest jobs in hand. */
  async merge(input: MergeInput): Promise<MergeOutput> {
    if (this.closed) throw new Error('MergePool is closed');
    if (this.broken) throw this.broken;
    // Workers start with the first merge: a hub that never ingests never pays for them.
    while (this.slots.length < this.size) this.slots.push(this.spawn());
    let slot = this.slots[0] as Slot;
    for (const s of this.slots) if (s.jobs.size < slot.jobs.size) slot = s;
    const id = this.next++;
    const done = new Promise<MergeOutput>((resolve, reject) => slot.jobs.set(id, { resolve, reject }));
    // Counted against the worker at once (the next job goes elsewhere), posted once it has started.
    void slot.ready.then(() => {
      if (slot.jobs.has(id)) slot.worker.postMessage({ id, input });
    });
    return done;
  }

  /** Each started worker's memory, as the worker measures it (a worker that dies meanwhile is left out). */
  async memory(): Promise<ThreadMemory[]> {
    const started = this.closed ? [] : this.slots;
    const answers = await Promise.all(
      started.map(
        (slot) =>
          new Promise<ThreadMemory | null>((resolve) => {
            const id = this.next++;
            slot.asks.set(id, resolve);
            void slot.ready.then(() => {
              if (slot.asks.has(id)) slot.worker.postMessage({ id, memory: true });
            });
          }),
      ),
    );
    return answers.filter((m): m is ThreadMemory => m !== null);
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }

  private spawn(): Slot {
    const worker = new Worker(new URL('./mergeWorker.js', import.meta.url));
    worker.unref();
    const jobs: Slot['jobs'] = new Map();
    const asks: Slot['asks'] = new Map();
    let started: () => void = () => {};
    let isReady = false;
    let dead = false;
    const slot: Slot = { worker, jobs, asks, ready: new Promise<void>((r) => (started = r)) };
    type Message = { ready?: true; id: number; out?: MergeOutput; error?: string; memory?: ThreadMemory };
    worker.on('message', (m: Message) => {
      if (m.ready) {
        isReady = true;
        return started();
      }
      if (m.memory) {
        asks.get(m.id)?.(m.memory);
        asks.delete(m.id);
        return;
      }
      const job = jobs.get(m.id);
      jobs.delete(m.id);
      if (m.error !== undefined) job?.reject(new Error(`merge worker: ${m.error}`));
      else job?.resolve(m.out as MergeOutput);
    });
    const fail = (e: Error) => {
      if (dead) return;
      dead = true;
      if (!isReady) this.broken = new Error(`merge worker did not start: ${e.message}`);
      for (const job of jobs.values()) job.reject(this.broken ?? e);
      jobs.clear();
      for (const ask of asks.values()) ask(null);
      asks.clear();
      started();
      if (this.closed || this.broken) return;
      this.onError(e);
      // Replace the worker: its Automerge module may be dead (an allocation failure is unrecoverable).
      const i = this.slots.indexOf(slot);
      if (i >= 0) this.slots[i] = this.spawn();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`merge worker exited with code ${code}`)));
    return slot;
  }
}
