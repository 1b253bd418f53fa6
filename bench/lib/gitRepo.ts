import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { seededRandom } from '@driftline/simulation';

/** Runs the system `git` in `cwd` with a fixed identity and no hooks; answers trimmed stdout. */
export const git = (cwd: string, ...args: string[]): string =>
  execFileSync(
    'git',
    ['-c', 'user.email=hq@example.org', '-c', 'user.name=hq', '-c', 'core.hooksPath=/dev/null', ...args],
    { cwd, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
  ).trim();

/** Seeded (mulberry32, simulation's), so every run makes the same repository. */
const seeded = (seed: number) => seededRandom(seed);

/**
 * Text that compresses roughly like source code: lines of indented words from a fixed vocabulary of
 * 1,500, drawn with a skew (a few words very common, as keywords and identifiers are).
 */
export function wordText(random: () => number, bytes: number): string {
  const letters = 'abcdefghijklmnopqrstuvwxyz_';
  const vocab: string[] = [];
  const vr = seeded(7);
  for (let i = 0; i < 1500; i++) {
    const n = 2 + Math.floor(vr() * 9);
    let w = '';
    for (let j = 0; j < n; j++) w += letters[Math.floor(vr() * letters.length)];
    vocab.push(w);
  }
  const lines: string[] = [];
  let size = 0;
  while (size < bytes) {
    const words = 3 + Math.floor(random() * 9);
    const parts: string[] = [];
    for (let i = 0; i < words; i++) parts.push(vocab[Math.floor(vocab.length * random() ** 4)]!);
    const line = `${'  '.repeat(Math.floor(random() * 4))}${parts.join(' ')}`;
    lines.push(line);
    size += line.length + 1;
  }
  return `${lines.join('\n')}\n`;
}

export interface BenchRepo {
  dir: string;
  mainSha: string;
  /** The text files (relative paths), each ~`fileBytes`. */
  files: string[];
  /** Bytes of the working tree's files. */
  treeBytes: number;
}

/**
 * A repository of `files` text files of ~`fileBytes` each under `lib/`, plus one component
 * (`stacks/network`: a main.tf and the fake terraform's scenario), committed on `main`.
 */
export function makeRepo(dir: string, files: number, fileBytes: number, seed = 16): BenchRepo {
  const random = seeded(seed);
  mkdirSync(join(dir, 'stacks/network'), { recursive: true });
  mkdirSync(join(dir, 'lib'), { recursive: true });
  git(dir, 'init', '-q', '-b', 'main');
  writeFileSync(join(dir, 'stacks/network/main.tf'), '# network\n');
  writeFileSync(join(dir, 'stacks/network/fake-terraform.yaml'), 'seed: 5\nsteps:\n  - { state: clean }\n');
  const names: string[] = [];
  let treeBytes = 0;
  for (let i = 0; i < files; i++) {
    const name = `lib/module-${String(i).padStart(3, '0')}.txt`;
    const text = wordText(random, fileBytes);
    writeFileSync(join(dir, name), text);
    names.push(name);
    treeBytes += text.length;
  }
  git(dir, 'add', '.');
  git(dir, 'commit', '-qm', 'main');
  return { dir, mainSha: git(dir, 'rev-parse', 'HEAD'), files: names, treeBytes };
}

/** On a new branch `branch`: `lines` lines of `file` from line `at` replaced by new words, committed. */
export function changeLines(
  repo: BenchRepo,
  branch: string,
  file: string,
  at: number,
  lines: number,
): string {
  git(repo.dir, 'checkout', '-qb', branch);
  const path = join(repo.dir, file);
  const text = readFileSync(path, 'utf8').split('\n');
  const fresh = wordText(seeded(99), 60 * lines)
    .split('\n')
    .slice(0, lines);
  text.splice(at, lines, ...fresh);
  writeFileSync(path, text.join('\n'));
  git(repo.dir, 'commit', '-qam', `${branch}: change ${lines} lines of ${file}`);
  return git(repo.dir, 'rev-parse', 'HEAD');
}

/** Bytes of a file `git` writes (a bundle, an archive). */
export function gitFileBytes(cwd: string, file: string, ...args: string[]): number {
  git(cwd, ...args);
  return statSync(file).size;
}
