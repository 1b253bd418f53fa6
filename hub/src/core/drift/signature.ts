/**
 * Signatures: what the same problem at many sites shares (decision 421). A drift's is its resource type,
 * its address with every instance key and index generalised to `[*]`, and the names of its attributes;
 * a failing check's its generalised address; a failure's its reason and the redacted first line of its
 * excerpt with numbers and quoted text generalised.
 */

/** `module.net["eu"].aws_subnet.a[3]` → `module.net[*].aws_subnet.a[*]`, in one pass (quotes honoured). */
export function generaliseAddress(address: string): string {
  let out = '';
  let i = 0;
  while (i < address.length) {
    const c = address[i] as string;
    if (c !== '[') {
      out += c;
      i++;
      continue;
    }
    let j = i + 1;
    if (address[j] === '"') {
      j++;
      while (j < address.length && address[j] !== '"') j += address[j] === '\\' ? 2 : 1;
      j++;
    }
    while (j < address.length && address[j] !== ']') j++;
    out += '[*]';
    i = j + 1;
  }
  return out;
}

export function driftSignature(type: string, address: string, attributes: readonly string[]): string {
  return `drift ${type} ${generaliseAddress(address)} {${[...attributes].sort().join(',')}}`;
}

export function checkSignature(address: string): string {
  return `check ${generaliseAddress(address)}`;
}

/** The first line of an excerpt with numbers and quoted text generalised, at most 160 characters. */
export function failureLine(excerpt: string | undefined): string {
  const first = (excerpt ?? '').split('\n').find((l) => l.trim() !== '') ?? '';
  return first
    .trim()
    .slice(0, 300)
    .replace(/"[^"\n]{0,300}"/g, '"…"')
    .replace(/[0-9]+/g, 'N')
    .slice(0, 160);
}

export function failureSignature(reason: string, excerpt: string | undefined): string {
  return `failure ${reason} ${failureLine(excerpt)}`.trim();
}
