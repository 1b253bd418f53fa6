import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** The dashboard's session cookie. */
export const SESSION_COOKIE = 'driftline_session';
/** The header a cookie-authenticated write carries, with the value `GET /api/session` hands out. */
export const CSRF_HEADER = 'x-driftline-csrf';

/** Tokens and session ids are stored and looked up by this hash only. */
export const sha256Hex = (s: string) => createHash('sha256').update(s).digest('hex');

/** A new operator token or session id: 256 random bits, base64url. */
export const newSecret = () => randomBytes(32).toString('base64url');

/** The CSRF value of a session: HMAC-SHA256 of its id under the hub's CSRF key. */
export function csrfFor(key: Uint8Array, sessionId: string): string {
  return createHmac('sha256', key).update(`csrf:${sessionId}`).digest('base64url');
}

/**
 * The CSRF value of a browser principal: bound to its session, or, for a person signed in through the
 * SSO proxy (who has no session of ours), to their name.
 */
export function csrfOf(key: Uint8Array, p: { via: string; user: string; sessionId?: string }): string {
  return p.via === 'session' ? csrfFor(key, p.sessionId ?? '') : csrfFor(key, `sso:${p.user}`);
}

/** Compares two secrets in time independent of where they differ. */
export function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

/** `Set-Cookie` for a session (RFC 6265 §4.1): HttpOnly, SameSite=Strict, Path=/, Secure over https. */
export function sessionCookie(value: string, maxAgeS: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${value}; Path=/; Max-Age=${Math.floor(maxAgeS)}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

/** `Set-Cookie` that removes the session cookie. */
export function clearedCookie(secure: boolean): string {
  return sessionCookie('', 0, secure);
}

/** The value of cookie `name` in a `Cookie` header, or null. */
export function readCookie(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) {
      const v = part.slice(i + 1).trim();
      return /^[A-Za-z0-9_-]{1,128}$/.test(v) ? v : null;
    }
  }
  return null;
}
