import { hclUnescape, jsonUnescape } from './decode.js';

/**
 * Values in Terraform variable definitions the agent hands to the tool: `.tfvars` (HCL literals),
 * `.tfvars.json`, and `TF_VAR_*` values (a plain string, or an HCL literal for lists, maps and
 * objects). Every string, number, heredoc body and map key is a value; the top-level names (the
 * variables themselves) are not.
 */

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isIdentChar(c: string | undefined): boolean {
  return c !== undefined && /[A-Za-z0-9_-]/.test(c);
}

function isDigit(c: string | undefined): boolean {
  return c !== undefined && c >= '0' && c <= '9';
}

/** The next non-blank character from `i`. */
function nextSolid(s: string, i: number): string | undefined {
  let j = i;
  while (j < s.length && /[ \t]/.test(s[j] as string)) j++;
  return s[j];
}

/** One pass over HCL literal syntax: strings, heredocs, numbers, keys; comments skipped. */
export function hclLiteralValues(text: string, out: string[]): void {
  let depth = 0;
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    const n = text[i + 1];
    if (c === '#' || (c === '/' && n === '/')) {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '/' && n === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end === -1 ? text.length : end + 2;
    } else if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"' && text[j] !== '\n') j += text[j] === '\\' ? 2 : 1;
      out.push(hclUnescape(jsonUnescape(text.slice(i + 1, j))));
      i = j + 1;
    } else if (c === '<' && n === '<') {
      const lineEnd = text.indexOf('\n', i);
      const marker = text
        .slice(i + 2, lineEnd === -1 ? text.length : lineEnd)
        .replace(/^-/, '')
        .trim();
      let j = lineEnd === -1 ? text.length : lineEnd + 1;
      const body: string[] = [];
      while (j < text.length) {
        const e = text.indexOf('\n', j);
        const line = text.slice(j, e === -1 ? text.length : e);
        j = e === -1 ? text.length : e + 1;
        if (marker !== '' && line.trim() === marker) break;
        body.push(line);
      }
      out.push(body.join('\n'));
      i = j;
    } else if (c === '{' || c === '[') {
      depth++;
      i++;
    } else if (c === '}' || c === ']') {
      depth = Math.max(0, depth - 1);
      i++;
    } else if (isDigit(c) || (c === '-' && isDigit(n))) {
      let j = i + 1;
      while (j < text.length && /[0-9.eE+-]/.test(text[j] as string)) j++;
      out.push(text.slice(i, j));
      i = j;
    } else if (isIdentChar(c)) {
      let j = i + 1;
      while (isIdentChar(text[j])) j++;
      const word = text.slice(i, j);
      const after = nextSolid(text, j);
      // A bare key inside a map or object is a value; a top-level name is the variable's name.
      if (depth > 0 && (after === '=' || after === ':')) out.push(word);
      i = j;
    } else {
      i++;
    }
  }
}

/** Every string and number of a JSON value, and its keys below the top level. */
function jsonValues(root: unknown, out: string[]): void {
  const stack: { v: unknown; top: boolean }[] = [{ v: root, top: true }];
  while (stack.length > 0) {
    const { v, top } = stack.pop()!;
    if (typeof v === 'string') out.push(v);
    else if (typeof v === 'number' && Number.isFinite(v)) out.push(String(v));
    else if (Array.isArray(v)) for (const x of v) stack.push({ v: x, top: false });
    else if (isObj(v)) {
      for (const [k, x] of Object.entries(v)) {
        if (!top) out.push(k);
        stack.push({ v: x, top: false });
      }
    }
  }
}

/** The values in one variable definitions file (`.tfvars` or `.tfvars.json`). */
export function varFileValues(path: string, text: string): string[] {
  const out: string[] = [];
  if (path.endsWith('.json')) {
    try {
      jsonValues(JSON.parse(text), out);
      return out;
    } catch {
      // not JSON after all: read it as HCL, which finds its strings and numbers just the same
    }
  }
  hclLiteralValues(text, out);
  return out;
}

/** The value of a `TF_VAR_*` variable, and, for a list, map or object literal, the values inside. */
export function envVarValues(value: string): string[] {
  const out = [value];
  const t = value.trimStart();
  if (t[0] === '{' || t[0] === '[') hclLiteralValues(t, out);
  return out;
}
