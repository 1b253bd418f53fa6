import type { GitProbe } from '../../ports/PlanWorkspace.js';
import type { PlanSettings } from '../settings.js';

/**
 * Warnings for apply-enabled cells planned in a working directory that is not a git checkout: their
 * plans name no commit, and headquarters approves only a plan of a known commit ("names no full commit
 * id"), so they can never be applied (decision 200). One warning per component, naming the directories.
 */
export async function applyCheckoutWarnings(
  config: Pick<PlanSettings, 'components'>,
  git: GitProbe,
): Promise<string[]> {
  const warnings: string[] = [];
  for (const [i, c] of config.components.entries()) {
    if (!c.apply || c.source || c.command) continue;
    const envs = c.environments.filter(
      (e) => !c.apply?.environments || c.apply.environments.includes(e.name),
    );
    const dirs = [...new Set(envs.map((e) => e.workingDir ?? c.workingDir).filter((d) => d !== undefined))];
    const bare: string[] = [];
    for (const d of dirs) {
      const info = await git.describe(d).catch(() => undefined);
      if (!info?.commit || !/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(info.commit)) bare.push(d);
    }
    if (bare.length > 0)
      warnings.push(
        `components[${i}].apply: ${c.name} has apply but its working directory ${bare.map((d) => `"${d}"`).join(', ')} is not a git checkout, so its plans name no full commit id and can never be approved; make it a git checkout (git init, commit the code) or deliver the code with source: instead of workingDir`,
      );
  }
  return warnings;
}
