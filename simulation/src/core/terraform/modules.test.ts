import { describe, expect, it } from 'vitest';
import { fetchModules } from './modules.js';

const have = (paths: string[]) => ({ exists: (p: string) => paths.includes(p) });

describe('fake init: modules', () => {
  it('fetches local and git::file:// modules that exist, offline', () => {
    const r = fetchModules(
      [
        { name: 'local', source: './modules/local' },
        { name: 'git', source: 'git::file:///srv/mod.git?ref=v1' },
      ],
      have(['./modules/local', '/srv/mod.git']),
      false,
    );
    expect(r.errors).toBe('');
    expect(r.lines).toContain('Downloading git::file:///srv/mod.git?ref=v1 for git...');
  });

  it("fails a missing repository or a network source offline in Terraform's words, each naming its source", () => {
    const r = fetchModules(
      [
        { name: 'gone', source: 'git::file:///srv/gone.git' },
        { name: 'web', source: 'git::https://127.0.0.1:9/web.git' },
      ],
      have([]),
      false,
    );
    expect(r.errors.match(/Error: Failed to download module/g)).toHaveLength(2);
    expect(r.errors).toContain(
      'Could not download module "gone" (main.tf:1) source code from "git::file:///srv/gone.git"',
    );
    expect(r.errors).toContain('source code from "git::https://127.0.0.1:9/web.git"');
    expect(
      fetchModules([{ name: 'web', source: 'git::https://127.0.0.1:9/web.git' }], have([]), true).errors,
    ).toBe('');
  });
});
