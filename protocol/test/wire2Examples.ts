/**
 * The byte-by-byte examples of docs/decisions/490-hop-v2-wire-format.md, made by the codec with a fixed
 * key (Ed25519 signatures are deterministic). `wire2Record.test.ts` checks the record's hex against them;
 * `npx tsx protocol/test/wire2Examples.ts` prints the blocks to paste when the format changes.
 */
import { fromHex, toHex } from '../src/bytes.js';
import { wire2 } from '../src/index.js';

const { cborEncodeValue, cborHead, cellListDigest, encodeHeartbeat, encodeMessage } = wire2;

/** A fixed Ed25519 key: PKCS#8 around the 32-byte seed 01 02 … 20. */
async function exampleKey(): Promise<CryptoKey> {
  const seed = Array.from({ length: 32 }, (_, i) => (i + 1).toString(16).padStart(2, '0')).join('');
  const der = fromHex(`302e020100300506032b657004220420${seed}`) as Uint8Array<ArrayBuffer>;
  return globalThis.crypto.subtle.importKey('pkcs8', der, { name: 'Ed25519' }, false, ['sign']);
}

export interface Example {
  name: string;
  /** [hex, what it is], in order: joined, the message's bytes. */
  lines: [string, string][];
  bytes: Uint8Array;
}

const h = (b: Uint8Array) => toHex(b);
const uint = (n: number) => h(cborHead(0, n));

const T = 1_767_225_600_000; // 2026-01-01T00:00:00Z
const CELLS = ['prod/api', 'prod/db', 'prod/dns', 'prod/edge', 'prod/queue', 'prod/vpn'];

export async function examples(): Promise<Example[]> {
  const key = await exampleKey();
  const list = await cellListDigest(CELLS);
  const times = [0, 50, 100, 150, 200, 250].map((d) => T + d);
  const hb = encodeHeartbeat(
    list,
    times.map((at, index) => ({ index, at })),
  );
  const push: wire2.Message = {
    kind: 'push',
    from: 7,
    to: 0,
    seq: 12,
    body: { epoch: 1, heartbeat: hb, t0: T + 1000 },
  };
  const pull: wire2.Message = { kind: 'pull', from: 7, to: 3, seq: 40, body: { have: 5, holdS: 21_600 } };
  const pushBytes = await encodeMessage(push, key);
  const pullBytes = await encodeMessage(pull, key);
  const sig = (bytes: Uint8Array): [string, string][] => {
    const s = bytes.subarray(bytes.length - 64);
    return [
      ['5840', 'bytes(64): the signature'],
      [
        h(s.subarray(0, 32)),
        'Ed25519 by the agent key over "driftline/wire2" 00 || 86 || the bytes above after 87 (1/2)',
      ],
      [h(s.subarray(32)), '(2/2)'],
    ];
  };
  return [
    {
      name: 'quiet-push',
      bytes: pushBytes,
      lines: [
        ['87', 'array(7): a hop v2 message'],
        ['02', 'version 2'],
        ['01', 'kind 1: push'],
        ['07', 'from: agent short id 7'],
        ['00', 'to: 0, the hub'],
        ['0c', 'seq 12 of the stream agent 7 → hub'],
        ['a3', 'body: map(3)'],
        ['01', '  field 1 epoch'],
        ['01', '    1'],
        ['04', '  field 4 heartbeat'],
        ['a4', '    map(4)'],
        ['01', '    field 1 list'],
        [h(cborEncodeValue(list)), `      bytes(4): sha256 of the 6 sorted cell keys, first 4 bytes`],
        ['02', '    field 2 start'],
        [uint(T), `      ${T}: the first cell's plan end, ms (agent clock)`],
        ['03', '    field 3 runs'],
        [h(cborEncodeValue(hb.runs)), '      bytes(1): one run of 6 cells named'],
        ['04', '    field 4 gaps'],
        [h(cborEncodeValue(hb.gaps)), '      bytes(5): +50 ms five times, zigzag varints (100 each)'],
        ['06', '  field 6 t0'],
        [uint(T + 1000), `    ${T + 1000}: send time, asks the relay to stamp its custody answer`],
        ...sig(pushBytes),
      ],
    },
    {
      name: 'held-pull',
      bytes: pullBytes,
      lines: [
        ['87', 'array(7): a hop v2 message'],
        ['02', 'version 2'],
        ['02', 'kind 2: pull'],
        ['07', 'from: agent short id 7'],
        ['03', 'to: relay short id 3'],
        [uint(40), 'seq 40 of the stream agent 7 → relay 3'],
        ['a2', 'body: map(2)'],
        ['01', '  field 1 have'],
        ['05', '    5: the agent holds every message to it up to 5 (cumulative downlink receipt)'],
        ['02', '  field 2 holdS'],
        [uint(21_600), '    21600: hold up to 6 h while nothing is due'],
        ...sig(pullBytes),
      ],
    },
  ];
}

/** The record's block for an example: one line per field, hex then what it is. */
export function block(e: Example): string {
  const width = Math.max(...e.lines.map(([x]) => Math.min(x.length, 24)));
  return e.lines.map(([x, what]) => `${x.padEnd(width)}  ${what}`).join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const e of await examples())
    process.stdout.write(
      `<!-- example:${e.name} (${e.bytes.length} bytes) -->\n\`\`\`text\n${block(e)}\n\`\`\`\n\n`,
    );
}
