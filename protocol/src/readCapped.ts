/**
 * How an answer body must progress: no pause longer than `stallMs`, and once `stallMs` has passed, at
 * least `floorBytesPerS` on average since the body began (docs/decisions/410-independent-downlinks.md).
 */
export interface Progress {
  stallMs: number;
  floorBytesPerS: number;
  /** The caller's clock, ms. */
  now: () => number;
}

/** A body read, or why not: `stalled` when `progress` cut it. */
export type ReadCapped = { ok: true; bytes: Uint8Array } | { ok: false; reason: string; stalled?: true };

/**
 * Reads a fetch response body into memory, refusing more than `cap` bytes. `fetch` inflates
 * `Content-Encoding: br|gzip` by itself whatever the request asked for, so a hostile peer's few
 * compressed bytes can expand without bound: the body is read as a stream and cancelled past the cap
 * (S8 in docs/architecture.md#invariants). A `Content-Length` over the cap is refused before a byte is
 * read. With `progress`, an answer that stalls or drips is cut (`stalled`). The chunks are kept as they
 * came (a copy per chunk leaves as much garbage as it keeps until the next collection) and joined once at
 * the end: an answer refused at the cap cost the cap and a chunk (docs/decisions/413-downlink-reads-stream.md).
 * Web streams only, so agent, relay and browser share it.
 */
export async function readCapped(res: Response, cap: number, progress?: Progress): Promise<ReadCapped> {
  if (!res.body) return { ok: true, bytes: new Uint8Array(0) };
  const overCap = { ok: false, reason: `the response is over ${cap} bytes once inflated; refused` } as const;
  // A decoded body (Content-Encoding) is longer than its Content-Length: only a plain one is bounded by it.
  const length = res.headers.has('content-encoding') ? Number.NaN : Number(res.headers.get('content-length'));
  if (Number.isFinite(length) && length > cap) {
    await res.body.cancel().catch(() => {});
    return overCap;
  }
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let cut: string | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const t0 = progress?.now() ?? 0;
  const arm = () => {
    if (!progress) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      cut = `no progress for ${Math.round(progress.stallMs / 1000)} s after ${total} byte(s)`;
      reader.cancel().catch(() => {});
    }, progress.stallMs);
  };
  arm();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (cut || done) break;
      if (total + value.byteLength > cap) {
        await reader.cancel().catch(() => {});
        return overCap;
      }
      chunks.push(value);
      total += value.byteLength;
      if (progress) {
        const tookMs = progress.now() - t0;
        if (tookMs > progress.stallMs && total < (progress.floorBytesPerS * tookMs) / 1000) {
          cut = `${total} byte(s) in ${Math.round(tookMs / 1000)} s, under the floor of ${progress.floorBytesPerS} B/s`;
          await reader.cancel().catch(() => {});
          break;
        }
      }
      arm();
    }
  } catch (e) {
    if (!cut) return { ok: false, reason: `the response could not be read: ${(e as Error).message}` };
  } finally {
    clearTimeout(timer);
  }
  if (cut) return { ok: false, reason: `stalled: ${cut}`, stalled: true };
  // a plain view of a lone chunk (a Buffer from the socket): no copy, and callers get a Uint8Array
  const [one] = chunks;
  if (chunks.length === 1 && one)
    return { ok: true, bytes: new Uint8Array(one.buffer, one.byteOffset, one.byteLength) };
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks.splice(0)) {
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
