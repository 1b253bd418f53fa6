import { MAX_REFUSALS_HEADER, type RelayRefusal, RelayRefusalsSchema } from '@driftline/protocol';

/**
 * The refusals a relay sent with a downlink page (`REFUSALS_HEADER`); none when absent, too long or not
 * what the schema says (a relay's notice only shortens a wait, so a bad one is dropped, not an error).
 */
export function readRefusals(header: string | null): RelayRefusal[] {
  if (!header || header.length > MAX_REFUSALS_HEADER) return [];
  return readRefusalsJson(Buffer.from(header, 'base64url').toString('utf8'));
}

/** The same notices as JSON text (a hop v2 pull answer carries them so, decision 495). */
export function readRefusalsJson(json: string | undefined): RelayRefusal[] {
  if (!json || json.length > MAX_REFUSALS_HEADER) return [];
  try {
    const parsed = RelayRefusalsSchema.safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : [];
  } catch {
    return [];
  }
}
