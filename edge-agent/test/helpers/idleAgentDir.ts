import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateSigningKeyPair, publicKeyToText } from '@driftline/protocol';
import { tempDir } from './storeFixtures.js';

/**
 * A folder with `agent.yaml` for `ship-7/a1` talking to `upstream`, a hub key that signs nothing, one
 * component planned once a year and not at start (an agent that only syncs), and `edge-agent init` run
 * with `bin`. For tests of the daemon's own life: its start, its stop, its supervisor.
 */
export async function idleAgentDir(bin: string, upstream: string, prefix = 'agent-idle-'): Promise<string> {
  const dir = tempDir(prefix);
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
upstreams: [{ url: "${upstream}", tokenFile: ./token }]
components:
  - name: network
    workingDir: ./infra
    environments: [prod]
    schedule: "0 0 1 1 *"
sync: { planOnStart: false, intervalS: 1 }
`,
  );
  const init = spawnSync(process.execPath, [bin, 'init', '--config', 'agent.yaml'], {
    cwd: dir,
    encoding: 'utf8',
  });
  if (init.status !== 0) throw new Error(`edge-agent init failed: ${init.stderr}`);
  return dir;
}
