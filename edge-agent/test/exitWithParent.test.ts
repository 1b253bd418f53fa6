import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stopsWithSupervisor } from '@driftline/hop/testing';
import { generateSigningKeyPair, publicKeyToText } from '@driftline/protocol';
import { expect, it } from 'vitest';
import { tempDir } from './helpers/storeFixtures.js';

const bin = fileURLToPath(new URL('../bin/edge-agent.js', import.meta.url));

/**
 * A supervisor killed outright (SIGKILL) leaves no agent behind when it started it with
 * `DRIFTLINE_EXIT_WITH_PARENT=1` (docs/operations.md, "Under a supervisor of your own"), as the demo
 * does. The agent's stderr is the dead supervisor's pipe: its last log lines meet a closed pipe, and
 * it stops all the same (an asynchronous logger's exit flush, retrying such a line, once held it for good).
 */
it('an agent started with DRIFTLINE_EXIT_WITH_PARENT=1 stops when its supervisor, its stderr reader, is SIGKILLed', {
  timeout: 90_000,
}, async () => {
  const dir = tempDir('agent-orphan-');
  mkdirSync(join(dir, 'infra'));
  writeFileSync(
    join(dir, 'hub.pub'),
    `${await publicKeyToText((await generateSigningKeyPair()).publicKey)}\n`,
  );
  writeFileSync(join(dir, 'token'), 'x\n');
  writeFileSync(
    join(dir, 'agent.yaml'),
    `site: ship-7
agent: a1
dataDir: ./data
hubPublicKeyFile: ./hub.pub
upstreams: [{ url: "http://127.0.0.1:9", tokenFile: ./token }]
components:
  - name: network
    workingDir: ./infra
    environments: [prod]
    schedule: "0 0 1 1 *"
sync: { planOnStart: false, intervalS: 1 }
`,
  );
  expect(spawnSync(process.execPath, [bin, 'init', '--config', 'agent.yaml'], { cwd: dir }).status).toBe(0);
  // stderr is the supervisor's own pipe, as under a real supervisor: its 'stopping' line meets EPIPE and
  // the agent exits all the same (an exit flush that retried it held one in three for good)
  expect(
    await stopsWithSupervisor(bin, ['run', '--config', 'agent.yaml'], dir, /agent started/, 45_000, 'pipe'),
  ).toBe(true);
});
