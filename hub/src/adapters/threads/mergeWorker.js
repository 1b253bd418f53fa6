// A merge worker (see MergePool.ts): runs mergeDoc on the jobs its parent posts. Plain JavaScript
// because a worker thread starts without the parent's TypeScript loader (decision 001).
import { parentPort } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
const { mergeDoc } = await import('../../core/mergeDoc.ts');

parentPort.on('message', ({ id, input }) => {
  let out;
  try {
    out = mergeDoc(input);
  } catch (e) {
    parentPort.postMessage({ id, error: e instanceof Error ? (e.stack ?? e.message) : String(e) });
    return;
  }
  parentPort.postMessage({ id, out }, out.whole ? [out.whole.buffer] : []);
});
parentPort.postMessage({ ready: true });
