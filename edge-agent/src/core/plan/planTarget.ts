import type { ComponentSettings } from '../settings.js';

/** A configured (component, environment); `C` is the caller's component type (the parsed config's, or core's). */
export interface PlanTarget<C extends ComponentSettings = ComponentSettings> {
  component: C;
  environment: C['environments'][number];
}

/** The configured (component, environment), or undefined: nothing outside the local config ever runs (S3). */
export function findTarget<C extends ComponentSettings>(
  config: { components: C[] },
  component: string,
  environment: string,
): PlanTarget<C> | undefined {
  const c = config.components.find((x) => x.name === component);
  const e = c?.environments.find((x) => x.name === environment);
  return c && e ? { component: c, environment: e } : undefined;
}
