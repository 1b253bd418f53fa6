import { describe, expect, it } from 'vitest';
import { ERRORS, ErrorBodySchema, renderError, WireError } from '../src/index.js';

describe('ERRORS table', () => {
  it('gives every code an HTTP error status and a message that says what to do', () => {
    for (const [code, e] of Object.entries(ERRORS)) {
      expect(e.status, code).toBeGreaterThanOrEqual(400);
      expect(e.status, code).toBeLessThan(600);
      expect(e.message.length, code).toBeGreaterThan(10);
    }
  });

  it('renders { error: { code, message } } with the detail first', () => {
    const r = renderError('payload-too-large', 'batch is 9 MB, the limit is 8 MB');
    expect(r.status).toBe(413);
    expect(ErrorBodySchema.parse(r.body).error.code).toBe('payload-too-large');
    expect(r.body.error.message).toMatch(/^batch is 9 MB/);
  });

  it('throws as a koa-friendly error with status and expose', () => {
    const e = new WireError('unauthorized');
    expect(e.status).toBe(401);
    expect(e.expose).toBe(true);
    expect(e.code).toBe('unauthorized');
  });
});
