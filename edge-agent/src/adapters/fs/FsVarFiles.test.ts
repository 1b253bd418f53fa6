import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FsVarFiles } from './FsVarFiles.js';

describe('FsVarFiles', () => {
  it('reads the passed var files and the ones Terraform loads by itself, up to a size, skipping the missing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'varfiles-'));
    mkdirSync(join(dir, 'env'));
    for (const [name, text] of [
      ['terraform.tfvars', 'a = "1"'],
      ['net.auto.tfvars.json', '{"b": "2"}'],
      ['other.tfvars', 'c = "3"'],
      ['env/staging.tfvars', `d = "${'x'.repeat(100)}"`],
    ]) {
      writeFileSync(join(dir, name as string), text as string);
    }
    const got = await new FsVarFiles().read(dir, ['env/staging.tfvars', 'missing.tfvars'], 10);
    expect(got).toEqual([
      { path: join(dir, 'env/staging.tfvars'), text: 'd = "xxxxx' },
      { path: join(dir, 'net.auto.tfvars.json'), text: '{"b": "2"}' },
      { path: join(dir, 'terraform.tfvars'), text: 'a = "1"' },
    ]);
  });
});
