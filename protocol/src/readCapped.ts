/**
 * Reads a fetch response body into memory, refusing more than `cap` bytes. `fetch` inflates
 * `Content-Encoding: br|gzip` by itself whatever the request asked for, so a hostile peer's few
 * compressed bytes can expand without bound: the body is read as a stream and cancelled past the cap
 * (S8 in docs/architecture.md#invariants). Web streams only, so agent, relay and browser share it.
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
        return { ok: false, reason: `the response is over ${cap} bytes once inflated; refused` };
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

/** The text of a capped body, or why it was not read. */
export async function readCappedText(
  res: Response,
  cap: number,
): Promise<{ ok: true; text: string } | { ok: false; reason: string }> {
  const r = await readCapped(res, cap);
  return r.ok ? { ok: true, text: new TextDecoder().decode(r.bytes) } : r;
}
