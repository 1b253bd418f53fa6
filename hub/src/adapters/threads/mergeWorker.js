// The merge worker as run from source (vitest, ad-hoc scripts): a worker thread starts without the
// parent's TypeScript loader, so it registers tsx and loads mergeWorkerMain.ts. The compiled hub loads
// hub/dist/mergeWorker.js instead (docs/decisions/440-compiled-programs.md).
import { register } from 'tsx/esm/api';

register();
await import('./mergeWorkerMain.ts');
