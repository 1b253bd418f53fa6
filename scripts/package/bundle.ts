/**
 * The agent and the relay as one ESM file each (esbuild), and the native and WebAssembly parts they load
 * at run time copied next to them, so the bundles need nothing from node_modules.
 *
 * - Automerge is its `slim` entry with an API that compiles `${__dirname}/automerge_wasm_bg.wasm` on the
 *   first call: the banner gives the bundle a `__dirname` (its own folder), and the .wasm is copied there.
 * - better-sqlite3 finds its addon through `bindings`, which walks up from the caller's file; in a
 *   bundle that walk finds nothing, so `bindings` is replaced by a module that loads the named addon
 *   from the bundle's folder.
 * - cbor-x loads cbor-extract (an optional native string decoder) when present; it is replaced the same
 *   way, so the packaged programs decode as fast as the source ones.
 */
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { build, type Plugin } from 'esbuild';

/**
 * The programs packed, by the file name of their bundle in `lib/`, with the Node flags their launcher adds
 * to everyone's: the relay exposes `gc` so that it can free the dead buffers of the payloads it took in or
 * forwarded at once (relay/src/memoryRelief.ts) rather than 64 MiB of them later; the agent starts Node
 * without its start-up snapshot, which keeps ~2 MB less resident for ~40 ms more at start.
 */
export const PROGRAMS = [
  {
    name: 'edge-agent',
    entry: 'edge-agent/src/cli.ts',
    bundle: 'edge-agent.mjs',
    flags: ['--no-node-snapshot'],
  },
  { name: 'relay', entry: 'relay/src/cli.ts', bundle: 'relay.mjs', flags: ['--expose-gc'] },
] as const;

// ESM output keeps the CLIs' top-level await; CommonJS modules inside it still see require/__dirname.
const BANNER = [
  "import { createRequire as __dlCreateRequire } from 'node:module';",
  "import { fileURLToPath as __dlFileURLToPath } from 'node:url';",
  "import { dirname as __dlDirname } from 'node:path';",
  'const require = __dlCreateRequire(import.meta.url);',
  'const __filename = __dlFileURLToPath(import.meta.url);',
  'const __dirname = __dlDirname(__filename);',
].join('\n');

const NATIVE_SHIMS: Record<string, string> = {
  bindings: "module.exports = (name) => require(require('node:path').join(__dirname, name));",
  'cbor-extract': "module.exports = require(require('node:path').join(__dirname, 'cbor_extract.node'));",
};

const nativeFromBundleDir: Plugin = {
  name: 'native-from-bundle-dir',
  setup(b) {
    b.onResolve({ filter: /^(bindings|cbor-extract)$/ }, (a) => ({ path: a.path, namespace: 'dl-native' }));
    b.onLoad({ filter: /.*/, namespace: 'dl-native' }, (a) => ({
      loader: 'js',
      contents: NATIVE_SHIMS[a.path],
    }));
  },
};

/**
 * Automerge's low-level calls (`ApiHandler` in its low_level.js); every other call goes through them or
 * through the handles they return. A test checks the list against Automerge's own.
 */
export const AUTOMERGE_API = [
  'create',
  'load',
  'encodeChange',
  'decodeChange',
  'initSyncState',
  'encodeSyncMessage',
  'decodeSyncMessage',
  'encodeSyncState',
  'decodeSyncState',
  'exportSyncState',
  'importSyncState',
  'readBundle',
  'wasmReleaseInfo',
] as const;

/**
 * `@automerge/automerge` as its `slim` entry plus an API that compiles the WebAssembly on the first call,
 * synchronously, from `automerge_wasm_bg.wasm` next to the bundle. The Node entry compiles it when the
 * program starts: ~27 MB of code, memory and compiler pages for an agent that may have nothing to
 * record for hours, and for every `--help`.
 */
function automergeOnFirstUse(automerge: string): Plugin {
  const web = join(automerge, 'dist/mjs/wasm_bindgen_output/web/automerge_wasm.js');
  const contents = `
import { use } from '@automerge/automerge/slim';
import * as bindings from ${JSON.stringify(web)};
export * from '@automerge/automerge/slim';
let ready = false;
function compiled() {
  if (!ready) {
    const bytes = require('node:fs').readFileSync(require('node:path').join(__dirname, 'automerge_wasm_bg.wasm'));
    bindings.initSync({ module: bytes });
    use(bindings);
    ready = true;
  }
  return bindings;
}
use(Object.fromEntries(${JSON.stringify(AUTOMERGE_API)}.map((name) => [name, (...args) => compiled()[name](...args)])));
`;
  return {
    name: 'automerge-on-first-use',
    setup(b) {
      b.onResolve({ filter: /^@automerge\/automerge$/ }, () => ({
        path: 'automerge',
        namespace: 'dl-automerge',
      }));
      b.onLoad({ filter: /.*/, namespace: 'dl-automerge' }, () => ({
        loader: 'js',
        contents,
        resolveDir: automerge,
      }));
    },
  };
}

/** The folder of package `name` as Node resolves it from `from` (a file path). */
function packageDir(name: string, from: string): string {
  let d = dirname(createRequire(from).resolve(name));
  for (let i = 0; i < 10; i++, d = dirname(d)) {
    const pj = join(d, 'package.json');
    if (existsSync(pj) && (JSON.parse(readFileSync(pj, 'utf8')) as { name?: string }).name === name) return d;
  }
  throw new Error(`cannot find the folder of ${name} (resolved from ${from}); run npm install`);
}

/** Files copied next to the bundles: where each comes from in the checkout, and its name in `lib/`. */
export function runtimeFiles(root: string): Array<{ from: string; to: string }> {
  const agent = join(root, 'edge-agent', 'package.json');
  const sqlite = packageDir('better-sqlite3', agent);
  const automerge = packageDir('@automerge/automerge', agent);
  const cbor = packageDir('cbor-x', join(root, 'protocol', 'package.json'));
  const cborExtract = packageDir('cbor-extract', join(cbor, 'package.json'));
  return [
    { from: join(sqlite, 'build/Release/better_sqlite3.node'), to: 'better_sqlite3.node' },
    {
      from: join(automerge, 'dist/mjs/wasm_bindgen_output/nodejs/automerge_wasm_bg.wasm'),
      to: 'automerge_wasm_bg.wasm',
    },
    { from: join(cborExtract, 'build/Release/extract.node'), to: 'cbor_extract.node' },
  ];
}

/**
 * Bundles one entry (a TypeScript file of this checkout) into `outfile` as the programs are bundled:
 * ESM, Node 20, native addons and Automerge's wasm loaded from `outfile`'s folder. Returns its bytes.
 */
export async function bundleEntry(root: string, entry: string, outfile: string): Promise<number> {
  const r = await build({
    absWorkingDir: root,
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    conditions: ['node'],
    banner: { js: BANNER },
    plugins: [
      nativeFromBundleDir,
      automergeOnFirstUse(packageDir('@automerge/automerge', join(root, 'edge-agent', 'package.json'))),
    ],
    legalComments: 'eof',
    // No comments or indentation: V8 keeps a script's whole source in memory (a few MB of the idle RSS).
    // The linked source map turns a stack trace back into source lines (node --enable-source-maps).
    minifyWhitespace: true,
    sourcemap: 'linked',
    sourcesContent: false,
    // Non-ASCII characters escaped, so V8 holds the source as one-byte text, not two-byte.
    charset: 'ascii',
    logLevel: 'error',
    metafile: true,
  });
  rootRelativeSources(`${outfile}.map`, root);
  return Object.entries(r.metafile.outputs)
    .filter(([name]) => !name.endsWith('.map'))
    .reduce((n, [, o]) => n + o.bytes, 0);
}

/**
 * esbuild writes a map's `sources` relative to the output folder (a temporary stage), which would put
 * the builder's paths in the package and make its bytes depend on where it was built: relative to the
 * checkout instead (`edge-agent/src/cli.ts`).
 */
function rootRelativeSources(mapFile: string, root: string): void {
  const map = JSON.parse(readFileSync(mapFile, 'utf8')) as { sources?: string[] };
  map.sources = (map.sources ?? []).map((s) => {
    const r = relative(root, resolve(dirname(mapFile), s));
    // Modules made up by a plugin (`dl-native:bindings`) have no file: their name alone.
    return r.startsWith('..') || isAbsolute(r) ? basename(s) : r;
  });
  writeFileSync(mapFile, JSON.stringify(map));
}

/** Bundles both programs into `libDir` and copies their native and wasm parts there; returns sizes. */
export async function bundlePrograms(root: string, libDir: string): Promise<Record<string, number>> {
  const sizes: Record<string, number> = {};
  for (const p of PROGRAMS) sizes[p.bundle] = await bundleEntry(root, p.entry, join(libDir, p.bundle));
  for (const f of runtimeFiles(root)) {
    if (!existsSync(f.from))
      throw new Error(`${f.from} is missing: run npm install (it builds the native addons) and try again`);
    copyFileSync(f.from, join(libDir, f.to));
  }
  return sizes;
}
