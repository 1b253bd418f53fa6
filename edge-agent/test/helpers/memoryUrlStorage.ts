import type { PreviousUpload, UrlStorage } from 'tus-js-client';

/** tus-js-client's URL storage in a map: an upload resumes within the test, as SQLite keeps it across restarts. */
export function memoryUrlStorage(): UrlStorage {
  const stored = new Map<string, PreviousUpload & { urlStorageKey: string }>();
  let n = 0;
  return {
    findAllUploads: async () => [...stored.values()],
    findUploadsByFingerprint: async (fp) =>
      [...stored.entries()].filter(([k]) => k.startsWith(`tus::${fp}::`)).map(([, u]) => u),
    removeUpload: async (k) => void stored.delete(k),
    addUpload: async (fp, u) => {
      const key = `tus::${fp}::${n++}`;
      stored.set(key, { ...u, urlStorageKey: key });
      return key;
    },
  };
}
