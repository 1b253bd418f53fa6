import { type AgentConfig, configWarnings, fileProblems, isWorkingDirProblem } from '../config.js';
import { applyCheckoutWarnings } from '../core/apply/applyCheckouts.js';
import type { Logger } from '../ports/Logger.js';
import type { GitProbe } from '../ports/PlanWorkspace.js';

/** Logs what in the config works but is likely a mistake, and apply-enabled checkouts that cannot apply. */
export function logStartWarnings(config: AgentConfig, git: GitProbe, log: Logger): void {
  for (const w of configWarnings(config)) log.warn({}, w);
  for (const p of fileProblems(config).filter(isWorkingDirProblem))
    log.warn({}, `${p}: its plans fail with this until it is there`);
  void applyCheckoutWarnings(config, git).then((ws) => {
    for (const w of ws) log.warn({}, w);
  });
}
