/**
 * Reads a fetch response body into memory, refusing more than `cap` bytes. `fetch` inflates
 * `Content-Encoding: br|gzip` by itself whatever the request asked for, so a hostile upstream's few
 * compressed bytes can expand without bound: the body is read as a stream and cancelled past the cap.
 */
export async function readCapped(
  res: Response,
  cap: number,
): Promise<{ ok: true; bytes: Uint8Array } | { ok: false; reason: string }> {
  if (!res.body) return { ok: true, bytes: new Uint8Array(0) };
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = res.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > cap) {
        await reader.cancel().catch(() => {});
        return {
          ok: false,
          reason: `the response is over ${cap} bytes once inflated (limits.maxResponseBytes)`,
        };
      }
      chunks.push(value);
    }
  } catch (e) {
    return { ok: false, reason: `the response could not be read: ${(e as Error).message}` };
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return { ok: true, bytes: out };
}

/** The JSON of a capped body, or null. */
export async function readCappedJson(res: Response, cap: number): Promise<unknown> {
  const r = await readCapped(res, cap);
  if (!r.ok) return null;
  try {
    return JSON.parse(new TextDecoder().decode(r.bytes));
  } catch {
    return null;
  }
}
