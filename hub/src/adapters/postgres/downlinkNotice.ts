/** The channel on which hubs sharing a database tell each other of the downlink they committed. */
export const DOWNLINK_CHANNEL = 'driftline_downlink';

/**
 * Longest payload sent, bytes: PostgreSQL refuses a notification of 8000 bytes or more. A list of sites
 * longer than this goes as "every site".
 */
export const NOTICE_MAX_BYTES = 7900;

/** Sites named in a notice, or every site (a list too long to send, a payload not understood). */
export type NoticeSites = readonly string[] | 'every';

export interface DownlinkNotice {
  /** The hub that committed (it rang its own bell already), or null when not said. */
  from: string | null;
  sites: NoticeSites;
}

/**
 * The payload of a notice: `{"from":"<hub>","sites":["ship-7",…]}`, or `"sites":"*"` for every site when
 * the list would not fit in a notification (docs/decisions/635-downlink-bell-across-hubs.md).
 */
export function encodeDownlinkNotice(from: string, sites: NoticeSites): string {
  const every = JSON.stringify({ from, sites: '*' });
  if (sites === 'every') return every;
  const named = JSON.stringify({ from, sites: [...new Set(sites)] });
  return Buffer.byteLength(named) <= NOTICE_MAX_BYTES ? named : every;
}

const EVERY: DownlinkNotice = { from: null, sites: 'every' };

/**
 * A notice read from the channel. A payload that is not one (too long, not JSON, the wrong shape, from a
 * newer hub saying something else) means every site: a held watch then reads the store once, where
 * trusting a garbled list could leave it asleep.
 */
export function decodeDownlinkNotice(payload: string | undefined): DownlinkNotice {
  // bounded before parsing: PostgreSQL sends no more, and nothing longer is read whatever sent it
  if (!payload || payload.length > 8000) return EVERY;
  let v: unknown;
  try {
    v = JSON.parse(payload);
  } catch {
    return EVERY;
  }
  if (typeof v !== 'object' || v === null) return EVERY;
  const { from, sites } = v as { from?: unknown; sites?: unknown };
  const by = typeof from === 'string' ? from : null;
  if (Array.isArray(sites) && sites.every((s) => typeof s === 'string')) return { from: by, sites };
  return { from: by, sites: 'every' };
}
