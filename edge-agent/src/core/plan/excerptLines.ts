import { lockBlockReader } from './lockInfo.js';

/**
 * The allow-list for lines of a tool's error output (S7 in docs/architecture.md#invariants). A line leaves the site only when it
 * has the shape of prose or of a source location, which carry no value:
 *
 * - no quote of any kind: Terraform quotes every value it prints (`var.x is "…"`, source snippets,
 *   `in resource "aws_vpc" "main"`); an apostrophe between two letters (`can't`) is not a quote;
 * - no `=`: assignments (source snippets, `key=value` in provider and HTTP errors);
 * - not a source snippet (`  3: db_password = …`) nor a value annotation (`├──…`, `var.x is 42`,
 *   `each.value is map of string`): a dotted reference followed by `is`;
 * - every colon is a heading (`Error: …`, `Lock Info:`, followed by a plain word or nothing) or a
 *   location (`variables.tf:4,3-13`); any other `label: value` pair (`ID: 9a1b…`, `Who: ops@host`,
 *   `https://…`) marks a value;
 * - no long token mixing letters and digits (16+ characters: ids, keys, tokens, hosts), locations
 *   excepted;
 * - at most `MAX_LINE` characters (longer lines are dropped whole, never cut).
 *
 * Two exceptions, both Terraform's own text: the quoted flag of its lock message (`"-lock=false"`,
 * `TOOL_LITERALS`) is no value and reads as written, and the field lines of a `Lock Info:` block are kept
 * under that block's own stricter rule (`lockInfo.ts`: seven names, bounded values, each scanned alone).
 *
 * What passes is then scanned against every value the agent knows (`buildErrorExcerpt`). All checks
 * are single passes or regular expressions without nested quantifiers over a bounded line.
 */

/** Longest line kept. */
export const MAX_LINE = 300;

const QUOTE = /["`\u2018\u2019\u201C\u201D\u00AB\u00BB]/;
const SNIPPET = /^\d{1,7}:/;
// Box-drawing characters written as escapes: a bundled program with any non-ASCII character keeps its
// whole source as two-byte text in memory.
const ANNOTATION = /^[\u251C\u2514\u250C\u2500]/; // ├ └ ┌ ─
const LOCATION = /^[A-Za-z0-9_./@+-]{0,200}\.(?:tf|tfvars|hcl|json|tofu)(?::\d[\d,-]{0,24})?$/;
const REFERENCE = /^[A-Za-z_][\w[\]*-]{0,100}\.[\w.[\]*-]{1,200}$/;
// A plain word, contractions included (`can't`, `it's`).
const LETTERS = /^[A-Za-z]+(?:'[a-z]{1,2})?$/;

/**
 * Quoted text Terraform prints in its own messages, naming a flag rather than a value: kept as written,
 * not read as a quote (statemgr's lock message: `you can disable locking with the "-lock=false" flag`).
 */
const TOOL_LITERALS = ['"-lock=false"'] as const;

/** `line` with Terraform's own literals replaced by a plain word, for the checks below. */
function withoutToolLiterals(line: string): string {
  let s = line;
  for (const lit of TOOL_LITERALS) s = s.replaceAll(lit, 'flag');
  return s;
}

const TRAILING = new Set([',', '.', ';', ':', ')', '(']);

function trimPunctuation(t: string): string {
  let end = t.length;
  while (end > 0 && TRAILING.has(t[end - 1] as string)) end--;
  return t.slice(0, end);
}

function isLetter(c: string | undefined): boolean {
  return c !== undefined && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'));
}

/** Quotes, counting `'` only where it is not an apostrophe inside a word. */
function hasQuote(line: string): boolean {
  if (QUOTE.test(line)) return true;
  for (let i = line.indexOf("'"); i !== -1; i = line.indexOf("'", i + 1)) {
    if (!(isLetter(line[i - 1]) && isLetter(line[i + 1]))) return true;
  }
  return false;
}

function colonsAreHeadingsOrLocations(line: string, tokens: readonly string[]): boolean {
  for (let i = line.indexOf(':'); i !== -1; i = line.indexOf(':', i + 1)) {
    const rest = line.slice(i + 1);
    if (rest.trim() === '') continue;
    if (rest[0] === ' ' || rest[0] === '\t') {
      const next = trimPunctuation(rest.trimStart().split(/\s/, 1)[0] ?? '');
      if (LETTERS.test(next)) continue;
      return false;
    }
    // `variables.tf:4,3-13`: the colon sits inside a location token.
    const start = line.lastIndexOf(' ', i) + 1;
    const token = trimPunctuation(line.slice(start).split(/\s/, 1)[0] ?? '');
    if (!tokens.includes(token) || !LOCATION.test(token)) return false;
  }
  return true;
}

/** Whether a (trimmed, box-drawing-free) line of error output may leave the site. */
export function valueFreeLine(whole: string): boolean {
  if (whole === '' || whole.length > MAX_LINE) return false;
  const line = withoutToolLiterals(whole);
  if (hasQuote(line) || line.includes('=')) return false;
  if (SNIPPET.test(line) || ANNOTATION.test(line) || line.includes('──')) return false;
  const tokens = line.split(/\s+/).map(trimPunctuation);
  for (let i = 0; i + 1 < tokens.length; i++) {
    if (tokens[i + 1] === 'is' && REFERENCE.test(tokens[i] as string)) return false;
  }
  if (!colonsAreHeadingsOrLocations(line, tokens)) return false;
  for (const t of tokens) {
    if (t.length >= 16 && /[A-Za-z]/.test(t) && /[0-9]/.test(t) && !LOCATION.test(t)) return false;
  }
  return true;
}

const CLOSING: Record<string, string> = {
  '"': '"',
  '`': '`',
  "'": "'",
  '\u201C': '\u201D',
  '\u2018': '\u2019',
};

/**
 * Every quoted part of `text` replaced by `…` (for Terraform's JSON diagnostics, whose `detail` quotes
 * values). An unclosed quote removes the rest of the line. Apostrophes inside words are kept.
 */
export function stripQuoted(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    const lit = c === '"' ? TOOL_LITERALS.find((l) => text.startsWith(l, i)) : undefined;
    if (lit) {
      out += lit;
      i += lit.length;
      continue;
    }
    const close = CLOSING[c];
    if (close === undefined || (c === "'" && isLetter(text[i - 1]) && isLetter(text[i + 1]))) {
      out += c;
      i++;
      continue;
    }
    let j = i + 1;
    while (j < text.length && text[j] !== close && text[j] !== '\n') j += text[j] === '\\' ? 2 : 1;
    out += '…';
    i = text[j] === close ? j + 1 : j;
  }
  return out;
}

// ESC [ … letter: terminal colour codes (Terraform without -no-color, wrappers).
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]{0,32}[A-Za-z]`, 'g');

const HEADING = /^(?:Error|Warning): (.{1,200})$/;
const BOX_END = /^\s*[\u2575\u2577]/; // ╵ ╷

/**
 * The lines of plain error output that pass `valueFreeLine`, and a `Lock Info:` block's field lines
 * (`lockBlockReader`), without colour codes or box drawing. Under
 * an `Error:`/`Warning:` heading that `dropBlock` names (a custom condition, whose text is the author's),
 * the lines up to the next heading or box edge are replaced by `dropped`, once.
 */
export function allowedLines(
  stderr: string,
  drop?: { dropBlock(summary: string): boolean; dropped: string },
): string[] {
  const out: string[] = [];
  let dropping = false;
  const lockLine = lockBlockReader();
  for (const raw of stderr.replace(ANSI, '').split(/\r?\n/)) {
    const l = raw.replace(/[\u2502\u2577\u2575]/g, '').trimEnd(); // │ ╷ ╵
    if (!dropping && lockLine(l.trim())) {
      out.push(l);
      continue;
    }
    const heading = HEADING.exec(l.trim());
    if (heading) dropping = drop?.dropBlock(heading[1] as string) ?? false;
    else if (BOX_END.test(raw)) dropping = false;
    else if (dropping) continue;
    if (valueFreeLine(l.trim())) out.push(l);
    if (heading && dropping) out.push(` ${drop?.dropped}`);
  }
  return out;
}
