import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { VarFiles } from '../src/ports/VarFiles.js';

/** An adapter holding `files` (paths relative to `root`, `/` separated); `done` cleans up. */
export type VarFilesSetup = (files: Record<string, string>) => {
  varFiles: VarFiles;
  root: string;
  done(): void;
};

/**
 * What every `VarFiles` adapter promises (ports/VarFiles.ts): the passed files (relative to `dir`, or
 * absolute), then those Terraform loads by itself from `dir` in name order, each once; missing files
 * skipped; each read up to `maxBytes`.
 */
export function runVarFilesContract(name: string, setup: VarFilesSetup): void {
  describe(`VarFiles contract: ${name}`, () => {
    const cleanup: Array<() => void> = [];
    afterEach(() => {
      for (const f of cleanup.splice(0)) f();
    });
    const open = (files: Record<string, string>) => {
      const s = setup(files);
      cleanup.push(s.done);
      return { varFiles: s.varFiles, at: (p: string) => join(s.root, p) };
    };

    it('reads the passed files, then the ones Terraform loads by itself in name order, skipping the missing', async () => {
      const { varFiles, at } = open({
        'stack/terraform.tfvars': 'a = "1"',
        'stack/net.auto.tfvars.json': '{"b": "2"}',
        'stack/db.auto.tfvars': 'e = "5"',
        'stack/terraform.tfvars.json': '{"f": "6"}',
        'stack/env/staging.tfvars': 'd = "4"',
        'shared/common.tfvars': 'g = "7"',
      });
      const got = await varFiles.read(
        at('stack'),
        ['env/staging.tfvars', 'missing.tfvars', at('shared/common.tfvars')],
        1000,
      );
      expect(got).toEqual([
        { path: at('stack/env/staging.tfvars'), text: 'd = "4"' },
        { path: at('shared/common.tfvars'), text: 'g = "7"' },
        { path: at('stack/db.auto.tfvars'), text: 'e = "5"' },
        { path: at('stack/net.auto.tfvars.json'), text: '{"b": "2"}' },
        { path: at('stack/terraform.tfvars'), text: 'a = "1"' },
        { path: at('stack/terraform.tfvars.json'), text: '{"f": "6"}' },
      ]);
    });

    it('reads a passed file Terraform also loads once, where it was passed; leaves others unread', async () => {
      const { varFiles, at } = open({
        'stack/terraform.tfvars': 'a = "1"',
        'stack/z.auto.tfvars': 'z = "26"',
        'stack/other.tfvars': 'c = "3"',
        'stack/env/nested.auto.tfvars': 'n = "0"',
        'stack/README.md': 'not variables',
      });
      const got = await varFiles.read(at('stack'), ['z.auto.tfvars'], 1000);
      expect(got.map((f) => f.path)).toEqual([at('stack/z.auto.tfvars'), at('stack/terraform.tfvars')]);
    });

    it('reads each file up to maxBytes', async () => {
      const { varFiles, at } = open({ 'stack/terraform.tfvars': `secret = "${'x'.repeat(100)}"` });
      expect(await varFiles.read(at('stack'), [], 12)).toEqual([
        { path: at('stack/terraform.tfvars'), text: 'secret = "xx' },
      ]);
    });

    it('answers nothing for a directory that does not exist', async () => {
      const { varFiles, at } = open({});
      expect(await varFiles.read(at('gone'), ['terraform.tfvars'], 1000)).toEqual([]);
    });
  });
}
