#!/usr/bin/env node
// Runs the compiled hub (`npm run build`); DRIFTLINE_FROM_SOURCE=1 runs its TypeScript through tsx instead
// (docs/decisions/440-compiled-programs.md).
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/hub.mjs', import.meta.url);
if (process.env.DRIFTLINE_FROM_SOURCE === '1') {
  (await import('tsx/esm/api')).register();
  await import('../src/cli.ts');
} else if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  console.error(
    'hub: not built: run `npm run build` in the checkout (or set DRIFTLINE_FROM_SOURCE=1 to run from source)',
  );
  process.exit(1);
}
