import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';

/** One tar member for a test tarball: a file (`body`), a folder, a symlink, or a raw type. */
export interface Member {
  path: string;
  body?: string | Buffer;
  mode?: number;
  /** '0' file (default), '5' folder, '2' symlink, '1' hard link, '3' device… */
  type?: string;
  link?: string;
}

function header(m: Member, size: number): Buffer {
  const h = Buffer.alloc(512);
  h.write(m.path, 0, 100, 'utf8');
  h.write(`${(m.mode ?? 0o644).toString(8).padStart(7, '0')}\0`, 100, 'latin1');
  h.write('0000000\0', 108, 'latin1');
  h.write('0000000\0', 116, 'latin1');
  h.write(`${size.toString(8).padStart(11, '0')}\0`, 124, 'latin1');
  h.write('00000000000\0', 136, 'latin1');
  h.write('        ', 148, 'latin1');
  h.write(m.type ?? '0', 156, 'latin1');
  if (m.link) h.write(m.link, 157, 100, 'utf8');
  h.write('ustar\0', 257, 'latin1');
  h.write('00', 263, 'latin1');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
  return h;
}

/** A gzip'd ustar archive of `members`, written by hand (so tests can make what GNU tar would not). */
export function tarGz(members: Member[]): Buffer {
  const parts: Buffer[] = [];
  for (const m of members) {
    const body = m.body === undefined ? Buffer.alloc(0) : Buffer.from(m.body);
    parts.push(header(m, body.length), body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  parts.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(parts));
}

/** The first bytes of an ELF executable for `machine` (0x3e x86_64, 0xb7 aarch64). */
export function elfStub(machine: number): Buffer {
  const b = Buffer.alloc(64);
  b.writeUInt32BE(0x7f454c46, 0);
  b[4] = 2;
  b[5] = 1;
  b.writeUInt16LE(2, 16);
  b.writeUInt16LE(machine, 18);
  return b;
}

/**
 * The members of a minimal driftline-edge release (VERSION, launcher, a stub Node, a bundle,
 * SHA256SUMS): what the agent checks, without 100 MB of Node.
 */
export function releaseMembers(
  version: string,
  opts: { unameM?: string; machine?: number; tamper?: boolean; unlisted?: Member[] } = {},
): Member[] {
  const files: Member[] = [
    { path: 'VERSION', body: `${version}\n` },
    {
      path: 'bin/edge-agent',
      body: `#!/bin/sh\nbuild_arch='${opts.unameM ?? 'x86_64'}'\nexec true\n`,
      mode: 0o755,
    },
    { path: 'lib/edge-agent.mjs', body: `console.log('${version}');\n` },
    { path: 'node/bin/node', body: elfStub(opts.machine ?? 0x3e), mode: 0o755 },
  ];
  const sums = files
    .filter((f) => (f.type ?? '0') === '0')
    .map(
      (f) =>
        `${createHash('sha256')
          .update(Buffer.from(f.body ?? ''))
          .digest('hex')}  ${f.path}`,
    )
    .join('\n');
  if (opts.tamper) files[2] = { path: 'lib/edge-agent.mjs', body: "console.log('changed on the way');\n" };
  return [...files, ...(opts.unlisted ?? []), { path: 'SHA256SUMS', body: `${sums}\n` }];
}
