import { box } from './messages.js';

/** A module call of the configuration, as the scenario's `modules` lists it. */
export interface ModuleCall {
  name: string;
  source: string;
}

/** What `init` may look at to fetch a module (an adapter reads the disk). */
export interface ModuleFetchPort {
  /** Whether a local directory or a `git::file://` repository exists at `path`. */
  exists(path: string): boolean;
}

/**
 * `init`'s module step, before providers, as Terraform 1.11 does it: a local path (`./`, `../`) must
 * exist; a `git::file://` repository must exist; any other source needs the network
 * (`FAKE_TERRAFORM_NETWORK=1`). Every failure is Terraform's "Failed to download module" with its
 * "Could not download module … source code from …" line; after module errors `init` stops.
 */
export function fetchModules(
  modules: ModuleCall[],
  port: ModuleFetchPort,
  network: boolean,
): { lines: string[]; errors: string } {
  if (modules.length === 0) return { lines: [], errors: '' };
  const lines = ['Initializing modules...'];
  const errors: string[] = [];
  modules.forEach((m, i) => {
    const at = `main.tf:${i * 3 + 1}`;
    if (m.source.startsWith('./') || m.source.startsWith('../')) {
      lines.push(`- ${m.name} in ${m.source.replace(/^\.\//, '')}`);
      if (!port.exists(m.source))
        errors.push(
          box('Unreadable module directory', [
            `Unable to evaluate directory symlink: lstat ${m.source}: no such file or directory`,
          ]),
        );
      return;
    }
    lines.push(`Downloading ${m.source} for ${m.name}...`);
    const url = m.source.replace(/^[a-z0-9+]+::/, '');
    const gitFile = /^file:\/\/(\/[^?]*)/.exec(url);
    const ok = gitFile ? port.exists(gitFile[1]!) : network;
    if (ok) {
      lines.push(`- ${m.name} in .terraform/modules/${m.name}`);
      return;
    }
    const why = gitFile
      ? `/usr/bin/git exited with 128: Cloning into '.terraform/modules/${m.name}'...\nfatal: '${gitFile[1]}' does not appear to be a git repository`
      : `/usr/bin/git exited with 128: Cloning into '.terraform/modules/${m.name}'...\nfatal: unable to access '${url}': Could not resolve host`;
    errors.push(
      box('Failed to download module', [
        `  on ${at.replace(':', ' line ')}:`,
        '',
        `Could not download module "${m.name}" (${at}) source code from "${m.source}": error downloading '${url}': ${why}`,
      ]),
    );
  });
  return { lines, errors: errors.join('') };
}
