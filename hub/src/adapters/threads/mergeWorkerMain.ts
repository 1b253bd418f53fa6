// A merge worker (see MergePool.ts): runs mergeDoc on the jobs its parent posts. Compiled to
// hub/dist/mergeWorker.js by `npm run build`; from source, mergeWorker.js loads it through tsx
// (docs/decisions/440-compiled-programs.md).
import { parentPort } from 'node:worker_threads';
import { automergeHeapBytes } from '../../core/HeapHeadroom.js';
import { type MergeInput, mergeDoc } from '../../core/mergeDoc.js';
import type { ThreadMemory } from '../../ports/Merger.js';

const port = parentPort;
if (!port) throw new Error('mergeWorkerMain runs only as a worker thread (MergePool starts it)');
const wasmBytes = automergeHeapBytes();
port.on('message', ({ id, input, memory }: { id: number; input?: MergeInput; memory?: true }) => {
  if (memory || !input) {
    const { heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
    const m: ThreadMemory = { heapUsed, heapTotal, external, arrayBuffers, wasm: wasmBytes() };
    port.postMessage({ id, memory: m });
    return;
  }
  let out: ReturnType<typeof mergeDoc>;
  try {
    out = mergeDoc(input);
  } catch (e) {
    port.postMessage({ id, error: e instanceof Error ? (e.stack ?? e.message) : String(e) });
    return;
  }
  port.postMessage({ id, out }, out.whole ? [out.whole.buffer as ArrayBuffer] : []);
});
port.postMessage({ ready: true });
