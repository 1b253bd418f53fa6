import cron from 'node-cron';
import type { AgentConfig } from '../../config.js';
import type { CellRef } from '../../core/schedule/CellScheduler.js';

/** The longest gap between the next few firings of a cron expression, in seconds: the cadence declared to the hub. */
export function cadenceSeconds(expression: string): number {
  const task = cron.createTask(expression, () => {});
  try {
    const runs = task.getNextRuns(8).map((d) => d.getTime());
    let max = 0;
    for (let i = 1; i < runs.length; i++) max = Math.max(max, (runs[i] as number) - (runs[i - 1] as number));
    return Math.round(max / 1000);
  } finally {
    void task.destroy();
  }
}

/** Declared cadence per cell key `environment/component`. */
export function cadences(config: AgentConfig): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of config.components) {
    const s = cadenceSeconds(c.schedule);
    for (const e of c.environments) out[`${e.name}/${c.name}`] = s;
  }
  return out;
}

/** Starts one cron task per component; each firing triggers all its environments. Returns a stop function. */
export function scheduleCells(config: AgentConfig, trigger: (cell: CellRef) => void): () => void {
  const tasks = config.components.map((c) =>
    cron.schedule(c.schedule, () => {
      for (const e of c.environments) trigger({ component: c.name, environment: e.name });
    }),
  );
  return () => {
    for (const t of tasks) void t.stop();
  };
}
