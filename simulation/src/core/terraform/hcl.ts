/**
 * A small reader for the HCL native syntax used by Terraform's CLI configuration file: attributes
 * (`name = value`) and blocks (`type "label" { … }`), values being strings, numbers, booleans, lists
 * and objects. No expressions, no heredocs, no interpolation: the CLI configuration has none either.
 * One pass over the text, nesting and size capped.
 */
export type HclValue = string | number | boolean | HclValue[] | { [k: string]: HclValue };
export interface HclBlock {
  type: string;
  labels: string[];
  body: HclBody;
  line: number;
}
export interface HclBody {
  attrs: Record<string, HclValue>;
  blocks: HclBlock[];
}

const MAX_CHARS = 256 * 1024;
const MAX_DEPTH = 16;

type Tok = {
  t: 'id' | 'str' | 'num' | 'nl' | '{' | '}' | '[' | ']' | '=' | ',' | ':' | 'eof';
  v: string;
  line: number;
};

function lex(text: string): Tok[] | string {
  const out: Tok[] = [];
  let line = 1;
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '\n') {
      out.push({ t: 'nl', v: c, line });
      line++;
      i++;
    } else if (c === ' ' || c === '\t' || c === '\r') i++;
    else if (c === '#' || (c === '/' && text[i + 1] === '/')) {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      if (end < 0) return `line ${line}: a /* comment is not closed`;
      for (let k = i; k < end; k++) if (text[k] === '\n') line++;
      i = end + 2;
    } else if (c === '"') {
      let j = i + 1;
      let v = '';
      while (j < text.length && text[j] !== '"' && text[j] !== '\n') {
        if (text[j] === '\\') {
          const e = text[j + 1];
          v += e === 'n' ? '\n' : e === 't' ? '\t' : (e ?? '');
          j += 2;
        } else v += text[j++];
      }
      if (text[j] !== '"') return `line ${line}: a string is not closed on its line`;
      out.push({ t: 'str', v, line });
      i = j + 1;
    } else if ('{}[]=,:'.includes(c)) {
      out.push({ t: c as Tok['t'], v: c, line });
      i++;
    } else if (/[0-9-]/.test(c)) {
      let j = i + 1;
      while (j < text.length && /[0-9.eE+-]/.test(text[j]!)) j++;
      out.push({ t: 'num', v: text.slice(i, j), line });
      i = j;
    } else if (/[A-Za-z_]/.test(c)) {
      let j = i + 1;
      while (j < text.length && /[A-Za-z0-9_-]/.test(text[j]!)) j++;
      out.push({ t: 'id', v: text.slice(i, j), line });
      i = j;
    } else return `line ${line}: unexpected character ${JSON.stringify(c)}`;
  }
  out.push({ t: 'eof', v: '', line });
  return out;
}

/** Parses HCL native syntax into attributes and blocks, or a problem naming the line. */
export function parseHcl(text: string): { ok: true; body: HclBody } | { ok: false; problem: string } {
  if (text.length > MAX_CHARS) return { ok: false, problem: `the file is over ${MAX_CHARS} characters` };
  const toks = lex(text);
  if (typeof toks === 'string') return { ok: false, problem: toks };
  let p = 0;
  const peek = () => toks[p]!;
  /** Consumes one token and answers `v`. */
  const take = <T>(v: T): T => {
    p++;
    return v;
  };
  const skipNl = () => {
    while (peek().t === 'nl') p++;
  };
  class Bad extends Error {}
  const fail = (what: string): never => {
    const t = peek();
    throw new Bad(
      `line ${t.line}: unexpected ${t.t === 'eof' ? 'end of file' : t.t === 'nl' ? 'end of line' : JSON.stringify(t.v)} (expected ${what})`,
    );
  };
  const value = (depth: number): HclValue => {
    if (depth > MAX_DEPTH) throw new Bad(`line ${peek().line}: nested too deep`);
    const t = peek();
    if (t.t === 'str') return take(t.v);
    if (t.t === 'num') {
      p++;
      const n = Number(t.v);
      if (!Number.isFinite(n)) throw new Bad(`line ${t.line}: ${t.v} is not a number`);
      return n;
    }
    if (t.t === 'id' && (t.v === 'true' || t.v === 'false')) return take(t.v === 'true');
    if (t.t === '[') {
      p++;
      const items: HclValue[] = [];
      for (;;) {
        skipNl();
        if (peek().t === ']') return take(items);
        items.push(value(depth + 1));
        skipNl();
        if (peek().t === ',') p++;
        else if (peek().t !== ']') fail(', or ]');
      }
    }
    if (t.t === '{') {
      p++;
      const obj: Record<string, HclValue> = {};
      for (;;) {
        skipNl();
        if (peek().t === '}') return take(obj);
        const k = peek();
        if (k.t !== 'id' && k.t !== 'str') fail('a key or }');
        p++;
        if (peek().t !== '=' && peek().t !== ':') fail('= or :');
        p++;
        obj[k.v] = value(depth + 1);
        if (peek().t === ',') p++;
      }
    }
    return fail('a string, number, bool, list or object');
  };
  const body = (depth: number, closing: boolean): HclBody => {
    if (depth > MAX_DEPTH) throw new Bad(`line ${peek().line}: nested too deep`);
    const out: HclBody = { attrs: {}, blocks: [] };
    for (;;) {
      skipNl();
      const t = peek();
      if (t.t === 'eof') {
        if (closing) fail('}');
        return out;
      }
      if (t.t === '}' && closing) {
        p++;
        return out;
      }
      if (t.t !== 'id') fail('an attribute or a block');
      p++;
      if (peek().t === '=') {
        p++;
        out.attrs[t.v] = value(depth + 1);
        if (peek().t !== 'nl' && peek().t !== 'eof' && peek().t !== '}') fail('end of line');
        continue;
      }
      const labels: string[] = [];
      while (peek().t === 'str' || peek().t === 'id') labels.push(toks[p++]!.v);
      if (peek().t !== '{') fail('= or {');
      p++;
      out.blocks.push({ type: t.v, labels, body: body(depth + 1, true), line: t.line });
    }
  };
  try {
    return { ok: true, body: body(0, false) };
  } catch (e) {
    if (e instanceof Bad) return { ok: false, problem: e.message };
    throw e;
  }
}
