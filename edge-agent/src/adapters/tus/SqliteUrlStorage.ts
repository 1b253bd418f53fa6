import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { PreviousUpload, UrlStorage } from 'tus-js-client';

/**
 * tus-js-client's URL storage kept in the agent's SQLite, so a half-done upload resumes after an agent
 * restart (Node's default storage keeps nothing; FIELD-NOTES).
 */
export class SqliteUrlStorage implements UrlStorage {
  constructor(private readonly db: Database.Database) {}

  async findAllUploads(): Promise<PreviousUpload[]> {
    const rows = this.db.prepare('SELECT upload FROM tus_uploads').all() as Array<{ upload: string }>;
    return rows.map((r) => JSON.parse(r.upload) as PreviousUpload);
  }

  async findUploadsByFingerprint(fingerprint: string): Promise<PreviousUpload[]> {
    const rows = this.db
      .prepare('SELECT upload FROM tus_uploads WHERE fingerprint = ?')
      .all(fingerprint) as Array<{
      upload: string;
    }>;
    return rows.map((r) => JSON.parse(r.upload) as PreviousUpload);
  }

  async removeUpload(urlStorageKey: string): Promise<void> {
    this.db.prepare('DELETE FROM tus_uploads WHERE storage_key = ?').run(urlStorageKey);
  }

  async addUpload(fingerprint: string, upload: PreviousUpload): Promise<string> {
    const key = `tus::${fingerprint}::${randomUUID()}`;
    this.db
      .prepare('INSERT INTO tus_uploads (storage_key, fingerprint, upload) VALUES (?, ?, ?)')
      .run(key, fingerprint, JSON.stringify({ ...upload, urlStorageKey: key }));
    return key;
  }
}
