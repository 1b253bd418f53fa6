import { describe, expect, it } from 'vitest';
import { decodeEnrolment, encodeEnrolment, enrolCommand } from '../src/enrolmentToken.js';

const e = { site: 'ship-7', agent: 'a1', key: `ed25519:${'A'.repeat(43)}` };

describe('enrolment strings', () => {
  it('round-trip as one word, also when a terminal wrapped them', async () => {
    const s = await encodeEnrolment(e);
    expect(s).toMatch(/^dle1\.[A-Za-z0-9_-]+\.[0-9a-f]{8}$/);
    expect(await decodeEnrolment(s)).toEqual({ ok: true, value: e });
    expect(await decodeEnrolment(`  ${s.slice(0, 20)}\n${s.slice(20)} `)).toEqual({ ok: true, value: e });
    expect(enrolCommand(s)).toBe(`hub enroll --config hub.yaml ${s}`);
  });

  it('refuses a copy that was cut or changed, saying how to get it again', async () => {
    const s = await encodeEnrolment(e);
    const i = s.indexOf('.') + 10;
    const changed = `${s.slice(0, i)}${s[i] === 'x' ? 'y' : 'x'}${s.slice(i + 1)}`;
    for (const bad of [changed, s.slice(0, -3), s.slice(0, s.lastIndexOf('.'))]) {
      const r = await decodeEnrolment(bad);
      expect(r.ok, bad).toBe(false);
      expect(!r.ok && r.error, bad).toMatch(/edge-agent init/);
    }
  });

  it('names what is wrong: not an enrolment string, a newer version, a bad field', async () => {
    expect(await decodeEnrolment('--site')).toMatchObject({
      ok: false,
      error: expect.stringMatching(/not an enrolment string/),
    });
    expect(await decodeEnrolment('dle2.abc.12345678')).toMatchObject({
      ok: false,
      error: expect.stringMatching(/upgrade the hub/),
    });
    const badSite = await encodeEnrolment({ ...e, site: 'Ship 7' });
    expect(await decodeEnrolment(badSite)).toMatchObject({ ok: false, error: expect.stringMatching(/site/) });
    const badKey = await encodeEnrolment({ ...e, key: 'ed25519:short' });
    expect(await decodeEnrolment(badKey)).toMatchObject({ ok: false, error: expect.stringMatching(/key/) });
  });
});
