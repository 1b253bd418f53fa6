import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * Builds the dashboard into `ui/dist`, which the hub serves at `/`. `vite dev` proxies `/api` (including
 * the `/api/events` stream) to the hub named by `DRIFTLINE_HUB_URL` (default http://127.0.0.1:8080).
 */
const hub = process.env.DRIFTLINE_HUB_URL ?? 'http://127.0.0.1:8080';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022' },
  server: { proxy: { '/api': { target: hub, changeOrigin: true } } },
});
