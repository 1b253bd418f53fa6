// The "remote API" of the test provider: one JSON file that tests read and edit to make drift,
// deletions outside Terraform and apply failures (docs/decisions/190-terraform-contract.md).
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';

/** One object as the provider keeps it. */
export interface StoredObject {
  name: string;
  value: string | null;
  secret: string | null;
  shape: string | null;
}

/** The whole file. `failApply` lists object names whose create/update fails (an apply error mid-way). */
export interface ObjectsFile {
  objects: Record<string, StoredObject>;
  failApply?: string[];
}

export function readObjects(path: string): ObjectsFile {
  if (!existsSync(path)) return { objects: {} };
  const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<ObjectsFile>;
  return { objects: parsed.objects ?? {}, failApply: parsed.failApply ?? [] };
}

export function writeObjects(path: string, file: ObjectsFile): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(file, null, 2)}\n`);
  renameSync(tmp, path);
}

export function newObjectId(): string {
  return `obj-${randomBytes(6).toString('hex')}`;
}
