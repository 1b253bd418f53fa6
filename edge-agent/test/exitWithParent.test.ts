import { fileURLToPath } from 'node:url';
import { stopsWithSupervisor } from '@driftline/hop/testing';
import { expect, it } from 'vitest';
import { idleAgentDir } from './helpers/idleAgentDir.js';

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
  const dir = await idleAgentDir(bin, 'http://127.0.0.1:9', 'agent-orphan-');
  // stderr is the supervisor's own pipe, as under a real supervisor: its 'stopping' line meets EPIPE and
  // the agent exits all the same (an exit flush that retried it held one in three for good)
  expect(
    await stopsWithSupervisor(bin, ['run', '--config', 'agent.yaml'], dir, /agent started/, 45_000, 'pipe'),
  ).toBe(true);
});
