#!/usr/bin/env node
// Runs the compiled relay (`npm run build`); DRIFTLINE_FROM_SOURCE=1 runs its TypeScript through tsx instead
// (docs/decisions/440-compiled-programs.md).
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/relay.mjs', import.meta.url);
if (process.env.DRIFTLINE_FROM_SOURCE === '1') {
  (await import('tsx/esm/api')).register();
  await import('../src/cli.ts');
} else if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  console.error(
    'relay: not built: run `npm run build` in the checkout (or set DRIFTLINE_FROM_SOURCE=1 to run from source)',
  );
  process.exit(1);
}
