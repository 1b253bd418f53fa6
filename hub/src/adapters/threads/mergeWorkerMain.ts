// A merge worker (see MergePool.ts): runs mergeDoc on the jobs its parent posts. Compiled to
// hub/dist/mergeWorker.js by `npm run build`; from source, mergeWorker.js loads it through tsx
// (docs/decisions/440-compiled-programs.md).
import { parentPort } from 'node:worker_threads';
import { type MergeInput, mergeDoc } from '../../core/mergeDoc.js';

const port = parentPort;
if (!port) throw new Error('mergeWorkerMain runs only as a worker thread (MergePool starts it)');
port.on('message', ({ id, input }: { id: number; input: MergeInput }) => {
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
