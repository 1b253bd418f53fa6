import { defineProject } from 'vitest/config';

export default defineProject({
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  test: {
    name: 'ui',
    environment: 'happy-dom',
    include: ['src/**/*.test.{ts,tsx}', 'test/**/*.test.{ts,tsx}'],
  },
});
