import { spawnSync } from 'node:child_process';
import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateSigningKeyPair, publicKeyToText } from '@driftline/protocol';
import { expect, it } from 'vitest';
import { describeRealTerraform } from './helpers/realTerraform.js';
import { tempDir } from './helpers/storeFixtures.js';
import { REPO, realPath } from './terraform/tools.js';

const bin = fileURLToPath(new URL('../bin/edge-agent.js', import.meta.url));

/**
 * The README's walk-through copies `examples/infra` beside `examples/agent.yaml`; an operator with a real
 * Terraform skips the fake and plans it as it is. An empty folder fails there ("No configuration
 * files"), so the example is code that plans offline: `terraform_data`, built into Terraform, no
 * provider to download.
 */
describeRealTerraform('the example infrastructure', () => {
  it('plans with the real terraform from examples/ alone: one resource to create', {
    timeout: 120_000,
  }, async () => {
    const dir = tempDir('example-infra-');
    cpSync(join(REPO, 'examples', 'agent.yaml'), join(dir, 'agent.yaml'));
    cpSync(join(REPO, 'examples', 'infra'), join(dir, 'infra'), { recursive: true });
    // what the walk-through's hub and relay hand the outpost
    writeFileSync(
      join(dir, 'hub.pub'),
      `${await publicKeyToText((await generateSigningKeyPair()).publicKey)}\n`,
    );
    writeFileSync(join(dir, 'agent.token'), 'a-token-from-relay-token-add\n');
    const env = { ...process.env, PATH: realPath(), CHECKPOINT_DISABLE: '1' };
    const run = (args: string[]) =>
      spawnSync(process.execPath, [bin, ...args, '--config', 'agent.yaml'], {
        cwd: dir,
        env,
        encoding: 'utf8',
      });
    expect(run(['init']).status).toBe(0);
    const plan = run(['plan', '--json']);
    expect(plan.status, plan.stderr).toBe(0);
    const [summary] = JSON.parse(plan.stdout) as Array<{ status: string; counts?: Record<string, number> }>;
    expect(summary?.status).toBe('changes');
    expect(plan.stdout).toContain('terraform_data.network');
  });
});
