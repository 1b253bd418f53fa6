/**
 * `@driftline/hop/config`: the one configuration checker of the agent, the relay and the hub
 * (docs/decisions/250-one-config-loader.md) and the rules their files share. Pure (no I/O, no server),
 * so the agent can load it without the hop server.
 */
import { parse as parseYaml } from 'yaml';

/** A config key that was renamed: the old name is read as the new one for one version. */
export interface RenamedKey {
  old: string;
  now: string;
  /** The decision record that renamed it. */
  decision: string;
}

/** `bundles:` became `publications:` (decision 170) in agent.yaml and relay.yaml. */
export const PUBLICATIONS_KEY: RenamedKey = { old: 'bundles', now: 'publications', decision: '170' };

/** The problem when the file gives both names (ambiguous: which one holds?), else null. */
export function renamedKeyProblem(raw: unknown, k: RenamedKey): string | null {
  const given = (key: string) => raw !== null && typeof raw === 'object' && key in raw;
  return given(k.old) && given(k.now) ? `${k.old}: is the old name of ${k.now}:; keep only ${k.now}:` : null;
}

/** The warning `config check` prints while a file still uses the old name. */
export const renamedKeyWarning = (k: RenamedKey): string =>
  `${k.old}: is deprecated (decision ${k.decision}); rename it to ${k.now}: (same keys), read as such for now`;

export {
  addressInUseProblem,
  ConfigProblem,
  checkConfig,
  didYouMean,
  keyPath,
  listenAs,
  type SchemaCheck,
} from './core/config/index.js';

/**
 * Parses a config file's text (YAML) into plain data; a syntax error is one problem naming the file
 * and the line, the same in the three programs.
 */
export function parseYamlText(
  text: string,
  file: string,
): { ok: true; raw: unknown } | { ok: false; problems: string[] } {
  try {
    return { ok: true, raw: parseYaml(text) };
  } catch (e) {
    const first = e instanceof Error ? e.message.split('\n')[0] : String(e);
    return { ok: false, problems: [`${file}: not valid YAML: ${first}`] };
  }
}
