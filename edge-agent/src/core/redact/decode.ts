/**
 * Decoders for the text a scan compares against: a value can hide behind JSON string escapes, HCL's
 * template escapes or URL percent-encoding. Each is a single linear pass written by hand (no regular
 * expression), tolerant of malformed input: what it cannot decode it keeps as is.
 */

const SIMPLE_ESCAPES: Record<string, string> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

function isHex(c: string | undefined): boolean {
  return c !== undefined && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'));
}

/** JSON string escapes (`\"`, `\\`, `\/`, `\b\f\n\r\t`, `\uXXXX`) decoded. */
export function jsonUnescape(s: string): string {
  if (!s.includes('\\')) return s;
  let out = '';
  let i = 0;
  while (i < s.length) {
    const c = s[i] as string;
    if (c !== '\\') {
      out += c;
      i++;
      continue;
    }
    const n = s[i + 1];
    const simple = n === undefined ? undefined : SIMPLE_ESCAPES[n];
    if (simple !== undefined) {
      out += simple;
      i += 2;
    } else if (n === 'u' && isHex(s[i + 2]) && isHex(s[i + 3]) && isHex(s[i + 4]) && isHex(s[i + 5])) {
      out += String.fromCharCode(Number.parseInt(s.slice(i + 2, i + 6), 16));
      i += 6;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** HCL's template escapes: `$${` is a literal `${`, `%%{` a literal `%{`. */
export function hclUnescape(s: string): string {
  return s.replaceAll('$${', '${').replaceAll('%%{', '%{');
}

const utf8 = new TextDecoder('utf-8');

/** `%XX` sequences decoded as UTF-8 bytes. */
export function percentDecode(s: string): string {
  if (!s.includes('%')) return s;
  let out = '';
  let i = 0;
  while (i < s.length) {
    if (s[i] === '%' && isHex(s[i + 1]) && isHex(s[i + 2])) {
      const bytes: number[] = [];
      while (s[i] === '%' && isHex(s[i + 1]) && isHex(s[i + 2])) {
        bytes.push(Number.parseInt(s.slice(i + 1, i + 3), 16));
        i += 3;
      }
      out += utf8.decode(new Uint8Array(bytes));
    } else {
      out += s[i];
      i++;
    }
  }
  return out;
}

/**
 * `text` with every decoding applied, twice over so that one encoding inside another (a JSON-escaped
 * URL, an URL-encoded JSON string) is undone too. Linear in the text.
 */
export function decodeText(text: string): string {
  let s = text;
  for (let round = 0; round < 2; round++) {
    const next = percentDecode(hclUnescape(jsonUnescape(s)));
    if (next === s) break;
    s = next;
  }
  return s;
}
