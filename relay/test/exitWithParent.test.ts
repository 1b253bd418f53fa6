import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stopsWithSupervisor } from '@driftline/hop/testing';
import { expect, it } from 'vitest';

const bin = fileURLToPath(new URL('../bin/relay.js', import.meta.url));

/**
 * A supervisor killed outright (SIGKILL: no handler runs) leaves no relay behind when it started it with
 * `DRIFTLINE_EXIT_WITH_PARENT=1` (docs/operations.md, "Under a supervisor of your own"), as the demo and
 * the simulator do.
 */
it('a relay started with DRIFTLINE_EXIT_WITH_PARENT=1 stops when its supervisor is SIGKILLed', {
  timeout: 60_000,
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'relay-orphan-'));
  writeFileSync(join(dir, 'up.token'), 'tok\n');
  writeFileSync(
    join(dir, 'relay.yaml'),
    'name: relay-1\ndataDir: ./data\nlisten: { host: 127.0.0.1, port: 0 }\nsites: [ship-1]\nupstreams: [{ url: "http://127.0.0.1:9", tokenFile: ./up.token }]\n',
  );
  expect(
    await stopsWithSupervisor(bin, ['run', '--config', 'relay.yaml'], dir, /relay listening/, 30_000),
  ).toBe(true);
});
