import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { basename, join } from 'node:path';
import { compareVersions } from './checks.js';

/** The releases under `<dir>/releases/` and where `<dir>/current` points. */
export interface PlacedReleases {
  dir: string;
  /** Versions placed, oldest first. */
  placed: string[];
  /** The version `current` points at, or null (no symlink, or not into releases/). */
  current: string | null;
  /** The symlink's text as it is, when there is one. */
  currentTarget: string | null;
}

/** Reads what is placed and current under a release install root (nothing is written). */
export function placedReleases(dir: string): PlacedReleases {
  let placed: string[] = [];
  try {
    placed = readdirSync(join(dir, 'releases'), { withFileTypes: true })
      .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
      .map((e) => e.name)
      .filter((v) => {
        try {
          return readFileSync(join(dir, 'releases', v, 'VERSION'), 'utf8').trim() === v;
        } catch {
          return false;
        }
      })
      .sort(compareVersions);
  } catch {}
  let currentTarget: string | null = null;
  try {
    currentTarget = readlinkSync(join(dir, 'current'));
  } catch {}
  const v = currentTarget ? basename(currentTarget) : null;
  return { dir, placed, current: v && placed.includes(v) ? v : null, currentTarget };
}
