import { hclLiteralValues } from './varFileValues.js';

/** A root-module `variable` block as far as redaction needs it. */
export interface DeclaredVariable {
  name: string;
  /** `sensitive = true` in the block. */
  sensitive: boolean;
  /** Every string, number and map key of its `default`, which a failed plan can still print. */
  defaults: string[];
}

function isIdentStart(c: string | undefined): boolean {
  return c !== undefined && /[A-Za-z_]/.test(c);
}
function isIdent(c: string | undefined): boolean {
  return c !== undefined && /[A-Za-z0-9_-]/.test(c);
}

/** Index after a `"…"` string starting at `i` (escapes honoured; a string never spans lines). */
function skipString(t: string, i: number): number {
  let j = i + 1;
  while (j < t.length && t[j] !== '"' && t[j] !== '\n') j += t[j] === '\\' ? 2 : 1;
  return j + 1;
}

/** Index after a heredoc (`<<EOF` / `<<-EOF` … `EOF`) starting at `i`. */
function skipHeredoc(t: string, i: number): number {
  const lineEnd = t.indexOf('\n', i);
  if (lineEnd === -1) return t.length;
  const marker = t
    .slice(i + 2, lineEnd)
    .replace(/^-/, '')
    .trim();
  let j = lineEnd + 1;
  while (j < t.length) {
    const e = t.indexOf('\n', j);
    const line = t.slice(j, e === -1 ? t.length : e);
    j = e === -1 ? t.length : e + 1;
    if (marker === '' || line.trim() === marker) break;
  }
  return j;
}

/** Index after a comment starting at `i`, or `i` when there is none. */
function skipComment(t: string, i: number): number {
  const c = t[i];
  const n = t[i + 1];
  if (c === '#' || (c === '/' && n === '/')) {
    const e = t.indexOf('\n', i);
    return e === -1 ? t.length : e;
  }
  if (c === '/' && n === '*') {
    const e = t.indexOf('*/', i + 2);
    return e === -1 ? t.length : e + 2;
  }
  return i;
}

/**
 * One linear pass over an HCL file: at the top level, `variable "<name>" {`; inside its body (and not
 * in a nested block), `sensitive = true` and `default = <expression>`, whose literals are read by the
 * same reader as `.tfvars` files. Strings, heredocs and comments are skipped whole, so a brace inside
 * them does not count.
 */
function fromHcl(t: string): DeclaredVariable[] {
  const out: DeclaredVariable[] = [];
  let depth = 0;
  /** The variable whose body is open, and the depth of its body. */
  let open: { v: DeclaredVariable; depth: number } | undefined;
  let i = 0;
  while (i < t.length) {
    const c = t[i] as string;
    const afterComment = skipComment(t, i);
    if (afterComment !== i) {
      i = afterComment;
    } else if (c === '"') {
      i = skipString(t, i);
    } else if (c === '<' && t[i + 1] === '<') {
      i = skipHeredoc(t, i);
    } else if (c === '{' || c === '[' || c === '(') {
      depth++;
      i++;
    } else if (c === '}' || c === ']' || c === ')') {
      depth = Math.max(0, depth - 1);
      if (open && depth < open.depth) open = undefined;
      i++;
    } else if (isIdentStart(c) && !isIdent(t[i - 1])) {
      let j = i + 1;
      while (isIdent(t[j])) j++;
      const word = t.slice(i, j);
      if (depth === 0 && word === 'variable') {
        const m = /^\s*"([^"\n]{1,128})"\s*\{/.exec(t.slice(j, j + 200));
        if (m) {
          const v: DeclaredVariable = { name: m[1] as string, sensitive: false, defaults: [] };
          out.push(v);
          depth++;
          open = { v, depth };
          i = j + m[0].length;
          continue;
        }
      } else if (open && depth === open.depth && (word === 'sensitive' || word === 'default')) {
        const eq = /^[ \t]*=[ \t]*/.exec(t.slice(j, j + 64));
        if (eq) {
          const start = j + eq[0].length;
          const end = expressionEnd(t, start);
          if (word === 'sensitive') open.v.sensitive = t.slice(start, end).trim() === 'true';
          else hclLiteralValues(t.slice(start, end), open.v.defaults);
          i = end;
          continue;
        }
      }
      i = j;
    } else {
      i++;
    }
  }
  return out;
}

/** Where an attribute's expression starting at `i` ends: the first line end outside any bracket. */
function expressionEnd(t: string, i: number): number {
  let nest = 0;
  let j = i;
  while (j < t.length) {
    const c = t[j] as string;
    const afterComment = skipComment(t, j);
    if (afterComment !== j) {
      if (nest === 0 && (c === '#' || t[j + 1] === '/')) return j;
      j = afterComment;
    } else if (c === '"') j = skipString(t, j);
    else if (c === '<' && t[j + 1] === '<') j = skipHeredoc(t, j);
    else if (c === '{' || c === '[' || c === '(') {
      nest++;
      j++;
    } else if (c === '}' || c === ']' || c === ')') {
      if (nest === 0) return j;
      nest--;
      j++;
    } else if (c === '\n' && nest === 0) return j;
    else j++;
  }
  return j;
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `{"variable": {"name": {"default": …, "sensitive": true}}}` (Terraform's JSON syntax). */
function fromJson(text: string): DeclaredVariable[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return [];
  }
  const vars = isObj(doc) ? doc.variable : undefined;
  if (!isObj(vars)) return [];
  return Object.entries(vars).map(([name, body]) => {
    const b = isObj(body) ? body : {};
    const defaults: string[] = [];
    if (b.default !== undefined) hclLiteralValues(JSON.stringify(b.default), defaults);
    return { name, sensitive: b.sensitive === true, defaults };
  });
}

/** The variables a root-module file declares (`.tf` or `.tf.json`). */
export function declaredVariables(path: string, text: string): DeclaredVariable[] {
  return path.endsWith('.json') ? fromJson(text) : fromHcl(text);
}
