// The small subset of MessagePack that Terraform's plugin protocol uses for DynamicValue
// (docs/plugin-protocol/object-wire-format.md in Terraform's repository): nil, bool, numbers,
// strings, arrays, maps, and cty's unknown value as a MessagePack extension (type 0; refined
// unknowns use type 12 and are read as plain unknowns here).

/** A value not known until apply (cty's unknown). */
export const UNKNOWN: unique symbol = Symbol('unknown');
export type Value = null | boolean | number | string | typeof UNKNOWN | Value[] | { [key: string]: Value };

const MAX_DEPTH = 64;

export function encode(value: Value): Buffer {
  const parts: Buffer[] = [];
  write(value, parts, 0);
  return Buffer.concat(parts);
}

function write(value: Value, out: Buffer[], depth: number): void {
  if (depth > MAX_DEPTH) throw new Error(`msgpack: value nested deeper than ${MAX_DEPTH}`);
  if (value === null) out.push(Buffer.from([0xc0]));
  else if (value === UNKNOWN) out.push(Buffer.from([0xd4, 0x00, 0x00]));
  else if (typeof value === 'boolean') out.push(Buffer.from([value ? 0xc3 : 0xc2]));
  else if (typeof value === 'number') {
    const b = Buffer.alloc(9);
    b[0] = 0xcb;
    b.writeDoubleBE(value, 1);
    out.push(b);
  } else if (typeof value === 'string') {
    const s = Buffer.from(value, 'utf8');
    out.push(header(s.length, 0xa0, 31, 0xd9, 0xda, 0xdb), s);
  } else if (Array.isArray(value)) {
    out.push(header(value.length, 0x90, 15, null, 0xdc, 0xdd));
    for (const v of value) write(v, out, depth + 1);
  } else {
    const keys = Object.keys(value).sort();
    out.push(header(keys.length, 0x80, 15, null, 0xde, 0xdf));
    for (const k of keys) {
      write(k, out, depth + 1);
      write(value[k] as Value, out, depth + 1);
    }
  }
}

function header(n: number, fix: number, fixMax: number, c8: number | null, c16: number, c32: number): Buffer {
  if (n <= fixMax) return Buffer.from([fix | n]);
  if (c8 !== null && n < 0x100) return Buffer.from([c8, n]);
  if (n < 0x10000) {
    const b = Buffer.alloc(3);
    b[0] = c16;
    b.writeUInt16BE(n, 1);
    return b;
  }
  const b = Buffer.alloc(5);
  b[0] = c32;
  b.writeUInt32BE(n, 1);
  return b;
}

export function decode(buf: Uint8Array): Value {
  const r = new Reader(Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength));
  const v = r.read(0);
  if (r.pos !== r.buf.length) throw new Error('msgpack: trailing bytes after the value');
  return v;
}

class Reader {
  pos = 0;
  constructor(readonly buf: Buffer) {}

  private take(n: number): Buffer {
    if (this.pos + n > this.buf.length) throw new Error('msgpack: value truncated');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  read(depth: number): Value {
    if (depth > MAX_DEPTH) throw new Error(`msgpack: value nested deeper than ${MAX_DEPTH}`);
    const c = this.take(1)[0]!;
    if (c <= 0x7f) return c;
    if (c >= 0xe0) return c - 0x100;
    if ((c & 0xe0) === 0xa0) return this.str(c & 0x1f);
    if ((c & 0xf0) === 0x90) return this.arr(c & 0x0f, depth);
    if ((c & 0xf0) === 0x80) return this.map(c & 0x0f, depth);
    switch (c) {
      case 0xc0:
        return null;
      case 0xc2:
        return false;
      case 0xc3:
        return true;
      case 0xca:
        return this.take(4).readFloatBE(0);
      case 0xcb:
        return this.take(8).readDoubleBE(0);
      case 0xcc:
        return this.take(1).readUInt8(0);
      case 0xcd:
        return this.take(2).readUInt16BE(0);
      case 0xce:
        return this.take(4).readUInt32BE(0);
      case 0xcf:
        return Number(this.take(8).readBigUInt64BE(0));
      case 0xd0:
        return this.take(1).readInt8(0);
      case 0xd1:
        return this.take(2).readInt16BE(0);
      case 0xd2:
        return this.take(4).readInt32BE(0);
      case 0xd3:
        return Number(this.take(8).readBigInt64BE(0));
      case 0xd9:
      case 0xc4:
        return this.strOrBin(c, this.take(1).readUInt8(0));
      case 0xda:
      case 0xc5:
        return this.strOrBin(c, this.take(2).readUInt16BE(0));
      case 0xdb:
      case 0xc6:
        return this.strOrBin(c, this.take(4).readUInt32BE(0));
      case 0xdc:
        return this.arr(this.take(2).readUInt16BE(0), depth);
      case 0xdd:
        return this.arr(this.take(4).readUInt32BE(0), depth);
      case 0xde:
        return this.map(this.take(2).readUInt16BE(0), depth);
      case 0xdf:
        return this.map(this.take(4).readUInt32BE(0), depth);
      // fixext 1/2/4/8/16 and ext 8/16/32: cty's unknown (type 0) or refined unknown (type 12).
      case 0xd4:
      case 0xd5:
      case 0xd6:
      case 0xd7:
      case 0xd8:
        this.take(1 + (1 << (c - 0xd4)));
        return UNKNOWN;
      case 0xc7:
        this.take(1 + this.take(1).readUInt8(0));
        return UNKNOWN;
      case 0xc8:
        this.take(1 + this.take(2).readUInt16BE(0));
        return UNKNOWN;
      case 0xc9:
        this.take(1 + this.take(4).readUInt32BE(0));
        return UNKNOWN;
      default:
        throw new Error(`msgpack: unsupported type byte 0x${c.toString(16)}`);
    }
  }

  private strOrBin(c: number, n: number): string {
    if (c === 0xc4 || c === 0xc5 || c === 0xc6) return this.take(n).toString('base64');
    return this.str(n);
  }

  private str(n: number): string {
    return this.take(n).toString('utf8');
  }

  private arr(n: number, depth: number): Value[] {
    const out: Value[] = [];
    for (let i = 0; i < n; i++) out.push(this.read(depth + 1));
    return out;
  }

  private map(n: number, depth: number): { [key: string]: Value } {
    const out: { [key: string]: Value } = {};
    for (let i = 0; i < n; i++) {
      const k = this.read(depth + 1);
      if (typeof k !== 'string') throw new Error('msgpack: map key is not a string');
      out[k] = this.read(depth + 1);
    }
    return out;
  }
}
