/**
 * Text views that remember where each of their characters came from, so a value found in a view can be
 * cut out of the original: `unescapeKey` (an address key as Terraform quotes it), `percentView` (URL
 * percent-encoding undone) and `fold` (compatibility forms, accents, invisible characters, white space
 * and case folded away). Each is one linear pass, written by hand.
 */

/** A text and, for each of its UTF-16 units, the range `[from, to)` of the source it came from. */
export interface Mapped {
  text: string;
  from: number[];
  to: number[];
}

/** A source range for `[start, end)` of a mapped view. */
export function sourceRange(m: Mapped, start: number, end: number): [number, number] {
  return [m.from[start] as number, m.to[end - 1] as number];
}

function push(m: Mapped, s: string, from: number, to: number): void {
  m.text += s;
  for (let k = 0; k < s.length; k++) {
    m.from.push(from);
    m.to.push(to);
  }
}

function isHex(c: string | undefined): boolean {
  return c !== undefined && /^[0-9a-fA-F]$/.test(c);
}

const SIMPLE: Record<string, string> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
};

function hexRun(s: string, i: number, n: number): boolean {
  for (let k = 0; k < n; k++) if (!isHex(s[i + k])) return false;
  return true;
}

/**
 * The text of a quoted instance key as Terraform prints it in an address (Go's `%q`: `\"`, `\\`, `\t`,
 * `\xXX`, `\uXXXX`, `\UXXXXXXXX`; JSON's escapes are a subset). What is not a valid escape stays as is.
 */
export function unescapeKey(s: string): Mapped {
  const m: Mapped = { text: '', from: [], to: [] };
  let i = 0;
  while (i < s.length) {
    const c = s[i] as string;
    const n = s[i + 1];
    if (c === '\\' && n !== undefined) {
      const simple = SIMPLE[n];
      if (simple !== undefined) {
        push(m, simple, i, i + 2);
        i += 2;
        continue;
      }
      const width = n === 'x' ? 2 : n === 'u' ? 4 : n === 'U' ? 8 : 0;
      if (width > 0 && hexRun(s, i + 2, width)) {
        const cp = Number.parseInt(s.slice(i + 2, i + 2 + width), 16);
        push(m, cp <= 0x10ffff ? String.fromCodePoint(cp) : '\uFFFD', i, i + 2 + width);
        i += 2 + width;
        continue;
      }
    }
    push(m, c, i, i + 1);
    i++;
  }
  return m;
}

const utf8 = new TextDecoder('utf-8');

/** `%XX` runs decoded as UTF-8; every character of a decoded run maps to the whole run. */
export function percentView(s: Mapped): Mapped {
  const m: Mapped = { text: '', from: [], to: [] };
  const t = s.text;
  let i = 0;
  while (i < t.length) {
    if (t[i] === '%' && isHex(t[i + 1]) && isHex(t[i + 2])) {
      const start = i;
      const bytes: number[] = [];
      while (t[i] === '%' && isHex(t[i + 1]) && isHex(t[i + 2])) {
        bytes.push(Number.parseInt(t.slice(i + 1, i + 3), 16));
        i += 3;
      }
      push(m, utf8.decode(new Uint8Array(bytes)), s.from[start] as number, s.to[i - 1] as number);
    } else {
      push(m, t[i] as string, s.from[i] as number, s.to[i] as number);
      i++;
    }
  }
  return m;
}

/** Marks, format and control characters, white space: dropped by `fold`. */
const DROPPED = /[\p{M}\p{Cf}\p{Cc}\p{Z}\s]/u;

/** One code point folded: compatibility decomposition, without marks or invisibles, lower case. */
export function foldChar(ch: string): string {
  let out = '';
  for (const d of ch.normalize('NFKD')) if (!DROPPED.test(d)) out += d;
  return out.toLowerCase();
}

/** `s` folded code point by code point (`foldChar`); the same function applied to a value and a text. */
export function fold(s: Mapped): Mapped {
  const m: Mapped = { text: '', from: [], to: [] };
  const t = s.text;
  let i = 0;
  while (i < t.length) {
    const cp = t.codePointAt(i) as number;
    const len = cp > 0xffff ? 2 : 1;
    const f = foldChar(t.slice(i, i + len));
    if (f !== '') push(m, f, s.from[i] as number, s.to[i + len - 1] as number);
    i += len;
  }
  return m;
}

/** A plain string as a view of itself. */
export function identity(s: string): Mapped {
  const m: Mapped = { text: s, from: [], to: [] };
  for (let i = 0; i < s.length; i++) {
    m.from.push(i);
    m.to.push(i + 1);
  }
  return m;
}

/** `s` folded, without the map (for values). */
export function foldText(s: string): string {
  let out = '';
  for (const ch of s) out += foldChar(ch);
  return out;
}
