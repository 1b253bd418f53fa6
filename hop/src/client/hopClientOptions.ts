import type { HopTransport } from './hopTransport.js';
import type { Wire2CarrierState } from './wire2Carrier.js';

/** Options of `HopClient`: the upstream, its token, timeouts, caps and clock. */
export interface HopClientOptions {
  /** Base URL of the upstream's hop API (a relay or the hub). */
  url: string;
  /** The bearer token, or a function read at each request (a token file re-read on change: `tokenFromFile`). */
  token: string | (() => string);
  /** Per request. Must exceed the link's round trip (minutes on some links); default 30 minutes. */
  timeoutMs?: number;
  /**
   * Largest answer read, after fetch has inflated it (default 64 MiB): a compressed bomb from a hostile
   * upstream stops here instead of filling memory.
   */
  maxResponseBytes?: number;
  /** The caller's clock; every exchange is timed with it (docs/decisions/070-clock-offsets.md). */
  now?: () => number;
  /** The caller's clock is disciplined: it reports `trusted`, never a measured offset. */
  trustedClock?: boolean;
  /**
   * Downlink pulls that make no progress this long are cut (`stalled`): an answer that has not begun
   * within the hold, the round trip and this, or a body that pauses this long or, past this long, comes
   * slower than `floorBytesPerS` (docs/decisions/410-independent-downlinks.md). Absent: only `timeoutMs`.
   */
  stallMs?: number;
  /** Least average rate of a downlink answer's body once `stallMs` has passed, bytes/s; default 128. */
  floorBytesPerS?: number;
  /** Carry hop v2 exchanges on h2c where the upstream states it (default true; `http:` only: issue 46). */
  h2c?: boolean;
  /**
   * What carries every exchange (default: this process's sockets). Given one, h2c is not tried: the
   * transport carries v2 as it carries v1 (the deterministic world's network:
   * docs/decisions/540-deterministic-world.md).
   */
  transport?: HopTransport;
  /** Hears what carries the v2 exchanges: after registration, and when h2c is refused on the way. */
  onWire2Carrier?: (s: Wire2CarrierState) => void;
}
