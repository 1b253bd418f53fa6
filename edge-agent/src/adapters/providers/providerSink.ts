import { open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { LOCK_FILE_MAX_CHARS, parseLockFile, parsePackedZipPath } from '@driftline/protocol';
import type { ProviderNeeds } from '../../core/plan/prepareSource.js';
import { safeName } from '../../core/publications/PublicationReceiver.js';
import type { PublicationFiles, PublicationSink } from '../../core/publications/ports.js';
import { checkProviderZip } from './checkProviderZip.js';
import { missingProviders } from './mirror.js';

/**
 * `provider-mirror` publications. One named as Terraform's packed layout
 * (`registry.terraform.io/hashicorp/aws/terraform-provider-aws_5.31.0_linux_amd64.zip`, what
 * `hub mirror publish` sends) is checked (a zip whose entries stay inside it, no symbolic links) and
 * placed at that path under the mirror directory, where `terraform init` finds it; any other name is
 * placed flat in the directory as before. `onPlaced` hears of each provider build placed.
 */
export function providerSink(
  dir: string,
  files: PublicationFiles,
  onPlaced: (path: string) => void,
): PublicationSink {
  return {
    refuse: () => null,
    apply: async ({ sha256, name, path }) => {
      const packed = parsePackedZipPath(name);
      if (!packed) {
        await files.place(sha256, dir, safeName(name, sha256));
        return { ok: true };
      }
      const problem = await checkProviderZip(path);
      if (problem) return { ok: false, reason: `provider archive refused: ${problem}` };
      const placed = await files.place(
        sha256,
        join(dir, dirname(name)),
        name.slice(name.lastIndexOf('/') + 1),
      );
      onPlaced(placed);
      return { ok: true };
    },
  };
}

/** Reads at most `max` characters of a file, or null when it does not exist. */
async function readCapped(path: string, max: number): Promise<string | null> {
  let fh: Awaited<ReturnType<typeof open>>;
  try {
    fh = await open(path, 'r');
  } catch {
    return null;
  }
  try {
    const buf = Buffer.alloc(max + 1);
    const { bytesRead } = await fh.read(buf, 0, max + 1, 0);
    return buf.subarray(0, bytesRead).toString('utf8');
  } finally {
    await fh.close();
  }
}

/** The lock file in a working directory against the site's provider mirrors, for one platform. */
export function lockFileNeeds(mirrors: readonly string[], platform: string): ProviderNeeds {
  return {
    check: async (dir) => {
      const text = await readCapped(join(dir, '.terraform.lock.hcl'), LOCK_FILE_MAX_CHARS);
      if (text === null) return { ok: true, needs: [] };
      const lock = parseLockFile(text);
      if (!lock.ok) return { ok: false, problem: `.terraform.lock.hcl: ${lock.problem}` };
      const m = await missingProviders(lock.providers, [...mirrors], platform);
      return { ok: true, needs: m.needs };
    },
  };
}
