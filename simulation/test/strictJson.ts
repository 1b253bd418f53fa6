/**
 * Parses one JSON text and reports every key that appears twice in one object. `JSON.parse` keeps the
 * last of two equal keys without a word, so a log line with a repeated key (a pino child binding
 * that repeats a base key, say) would pass it. Throws a SyntaxError on anything that is not JSON.
 */
export function parseStrictJson(text: string): { value: unknown; duplicates: string[] } {
  let i = 0;
  const duplicates: string[] = [];
  const fail = (what: string): never => {
    throw new SyntaxError(`${what} at ${i} in ${text.slice(0, 200)}`);
  };
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i] as string)) i++;
  };
  // Any quoted run; JSON.parse then refuses raw control characters and bad escapes in it.
  const STRING = /"(?:[^"\\]|\\.)*"/y;
  const LITERAL = /true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
  const token = (re: RegExp, what: string): string => {
    re.lastIndex = i;
    const m = re.exec(text);
    if (!m) return fail(what);
    i += m[0].length;
    return m[0];
  };
  const str = (): string => JSON.parse(token(STRING, 'bad string')) as string;
  const value = (path: string): unknown => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const out: Record<string, unknown> = {};
      const seen = new Set<string>();
      ws();
      if (text[i] === '}') {
        i++;
        return out;
      }
      for (;;) {
        ws();
        const k = str();
        if (seen.has(k)) duplicates.push(`${path}${k}`);
        seen.add(k);
        ws();
        if (text[i++] !== ':') fail("expected ':'");
        out[k] = value(`${path}${k}.`);
        ws();
        const n = text[i++];
        if (n === '}') return out;
        if (n !== ',') fail("expected ',' or '}'");
      }
    }
    if (c === '[') {
      i++;
      const out: unknown[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return out;
      }
      for (;;) {
        out.push(value(`${path}[${out.length}].`));
        ws();
        const n = text[i++];
        if (n === ']') return out;
        if (n !== ',') fail("expected ',' or ']'");
      }
    }
    if (c === '"') return str();
    return JSON.parse(token(LITERAL, 'unexpected token'));
  };
  const v = value('');
  ws();
  if (i !== text.length) fail('trailing characters');
  return { value: v, duplicates };
}
