/**
 * Where a v1 hop exchange's bytes go (issue 46, docs/decisions/490-hop-v2-wire-format.md): its request and
 * answer heads line by line, and its bodies opened (batch → bundles → header, payload, signature; receipts
 * JSON), so a quiet round can be told apart into signatures, key names, tokens, receipts, ids and
 * Automerge change bytes. Reads what the tap kept (`startHttpTap` with `keepBody`); changes nothing.
 */
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { cborDecode, decodeBatch, decodeBundle, readCustodyRecord } from '@driftline/protocol';
import type { TappedResponse } from './httpTap.js';

const KEY_TEXT = /ed25519:[A-Za-z0-9_-]{43}/g;
const B64_SIG = 86;

function inflate(body: Buffer | undefined, encoding: string | undefined): Buffer {
  if (!body || body.length === 0) return Buffer.alloc(0);
  if (encoding === 'br') return brotliDecompressSync(body);
  if (encoding === 'gzip') return gunzipSync(body);
  if (encoding === 'deflate') return inflateSync(body);
  return body;
}

const header = (h: [string, string][] | undefined, name: string) =>
  h?.find(([k]) => k.toLowerCase() === name)?.[1];

/** The bytes of the head lines, grouped by what they carry. */
function heads(lines: [string, string][] | undefined, first: string) {
  const out = {
    line: first.length + 2 + 2, // request or status line, and the blank line that ends the head
    bearerToken: 0,
    custodyRecords: 0,
    stamp: 0,
    clock: 0,
    http: 0,
    keyNames: 0,
    signaturesB64: 0,
  };
  for (const [k, v] of lines ?? []) {
    const n = `${k}: ${v}\r\n`.length;
    const name = k.toLowerCase();
    if (name === 'authorization') out.bearerToken += n;
    else if (name === 'driftline-custody' || name === 'driftline-source-clocks') {
      out.custodyRecords += n;
      for (const raw of v.split(',')) {
        const r = readCustodyRecord(raw);
        if (!r) continue;
        const json = JSON.stringify(r.record);
        // inside a record the key texts and the stamp's signature are base64url of JSON: 4/3 of their chars
        const keys = (json.match(KEY_TEXT) ?? []).length * 51;
        out.keyNames += Math.round((keys * 4) / 3);
        out.signaturesB64 += B64_SIG + (r.record.up ? Math.round((B64_SIG * 4) / 3) : 0);
      }
    } else if (name === 'driftline-stamp') {
      out.stamp += n;
      out.keyNames += 51;
      out.signaturesB64 += B64_SIG;
    } else if (name.startsWith('driftline-clock')) out.clock += n;
    else out.http += n;
  }
  return out;
}

/** A batch body opened: framing, bundle headers (ids, endpoints, heads), payloads, Automerge changes, signatures. */
function batch(raw: Buffer) {
  const out = {
    bytes: raw.length,
    bundles: 0,
    framing: 0,
    bundleHeaders: 0,
    payloads: 0,
    automerge: 0,
    signatures: 0,
  };
  if (raw.length === 0) return out;
  const b = decodeBatch(new Uint8Array(raw));
  if (!b.ok) return { ...out, error: b.error.message };
  out.framing = 8; // batch magic, version, count
  for (const bytes of b.value) {
    const d = decodeBundle(bytes);
    if (!d.ok) continue;
    const payload = cborDecode(d.value.payload) as { changes?: Uint8Array };
    const changes = payload.changes?.length ?? 0;
    out.bundles++;
    out.framing += 4 + 12; // the bundle's length in the batch; its magic, version and two lengths
    out.bundleHeaders += d.value.signed.length - 12 - d.value.payload.length;
    out.payloads += d.value.payload.length - changes;
    out.automerge += changes;
    out.signatures += 64;
  }
  return out;
}

/** The Automerge change bytes of every doc-delta a push carried. */
export function pushedChanges(x: TappedResponse): Uint8Array[] {
  const raw = inflate(x.reqBody, header(x.reqHeaders, 'content-encoding'));
  const b = decodeBatch(new Uint8Array(raw));
  if (!b.ok) return [];
  return b.value.flatMap((bytes) => {
    const d = decodeBundle(bytes);
    if (!d.ok || d.value.header.kind !== 'doc-delta') return [];
    const p = cborDecode(d.value.payload) as { changes?: Uint8Array };
    return p.changes ? [p.changes] : [];
  });
}

/** One exchange's bytes: heads by what they carry, bodies as sent and opened. */
export function exchangeBreakdown(name: string, x: TappedResponse) {
  const reqEnc = header(x.reqHeaders, 'content-encoding');
  const ansEnc = x.encoding;
  const reqRaw = inflate(x.reqBody, reqEnc);
  const ansRaw = inflate(x.body, ansEnc);
  const contentType = header(x.ansHeaders, 'content-type') ?? '';
  const receipts = contentType.includes('json') ? (ansRaw.toString().match(/"bundleId"/g) ?? []).length : 0;
  const bodyOf = (raw: Buffer, ct: string | undefined) =>
    ct?.includes('driftline') ? batch(raw) : { bytes: raw.length, json: raw.toString().slice(0, 400) };
  return {
    exchange: name,
    request: `${x.method} ${x.path.slice(0, 60)}`,
    reqHead: x.reqHeadBytes,
    reqBody: x.reqBytes,
    ansHead: x.bytes - (x.body?.length ?? 0),
    ansBody: x.body?.length ?? 0,
    reqHeads: heads(x.reqHeaders, `${x.method} ${x.path} HTTP/1.1`),
    ansHeads: heads(x.ansHeaders, `HTTP/1.1 ${x.status} OK`),
    reqBodyOpened: {
      encoding: reqEnc ?? 'identity',
      ...bodyOf(reqRaw, header(x.reqHeaders, 'content-type')),
    },
    ansBodyOpened: { encoding: ansEnc ?? 'identity', receipts, ...bodyOf(ansRaw, contentType) },
  };
}
