import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { toHex } from '@driftline/protocol';

/** Sequences reserved per write of the state file: one write per this many messages. */
const SEQ_BLOCK = 64;
/** Pushes remembered for their acks: more than a day's rounds of a busy site. */
const PUSHES_KEPT = 64;

/** What a push carried, for the hub's v2 ack that names it by sequence and signature (decision 495). */
export interface PushedDelta {
  doc: string;
  heads: string[];
}

/** What an upstream answered the agent's v2 registration, last (shown by `edge-agent status`). */
export type Wire2LinkState =
  | {
      wire: 2;
      node: number;
      since: number;
      /** What carries the v2 exchanges (absent: a state file written before h2c), and why HTTP/1.1. */
      carrier?: 'h2c' | 'http/1.1';
      reason?: string;
      /** The hub's v2 messages besides acks it carries down (decision 505). */
      carries?: string[];
    }
  | { wire: 1; reason: string; at: number };

interface Saved {
  next: number;
  pushes: { seq: number; tip: string; doc: string; heads: string[] }[];
  links?: Record<string, Wire2LinkState>;
  /** A hub ack said the hub rebuilds heartbeats (decision 500). */
  heartbeats?: boolean;
}

/** Where an agent keeps its hop v2 state: beside its store, in its data directory. */
export const wire2StatePath = (dataDir: string) => join(dataDir, 'wire2-state.json');

/** The state file as saved; empty when there is none or it does not read (a damaged file starts afresh). */
function load(file: string): Partial<Saved> {
  try {
    const s = JSON.parse(readFileSync(file, 'utf8')) as Partial<Saved> | null;
    return s && typeof s === 'object' ? s : {};
  } catch {
    return {};
  }
}

/** What `edge-agent status` reads of the state file beside a running daemon: each upstream's wire. */
export function readWire2Links(file: string): Record<string, Wire2LinkState> {
  const { links } = load(file);
  return links && typeof links === 'object' ? links : {};
}

/**
 * The agent's hop v2 state, kept in one small file beside its store (docs/decisions/495-hop-v2-on-the-agent-link.md):
 * the next message sequence (a block reserved on disk before any of it is used, so no number is signed
 * twice across a restart) and the last pushes, so an ack naming a push by its sequence and `tip` prunes
 * what that push carried. One for the agent: pushes go to the hub by whichever upstream, one stream.
 */
export class Wire2State {
  private next = 0;
  private reservedTo = 0;
  private pushes: Saved['pushes'] = [];
  private links: Record<string, Wire2LinkState> = {};
  /** Pushes noted since the file was last written ({@link flush}). */
  private unsaved = false;
  /**
   * A hub ack said the hub rebuilds heartbeats (decision 500): quiet rounds go as heartbeats from now on,
   * across restarts. A hub that stops rebuilding them refuses such a push; the agent then sends the change
   * itself while the rejection stands (`AgentLedger.heartbeatForm`).
   */
  rebuildsHeartbeats = false;

  constructor(private readonly file: string) {
    // none yet, or unreadable: sequences start at 1 again; the agent registers its key first after a
    // start, which starts its sequences afresh at the upstream (decision 495)
    const s = load(file);
    if (typeof s.next === 'number' && Number.isSafeInteger(s.next) && s.next > 0) this.reservedTo = s.next;
    if (Array.isArray(s.pushes)) this.pushes = s.pushes.slice(-PUSHES_KEPT);
    if (s.links && typeof s.links === 'object') this.links = s.links;
    this.rebuildsHeartbeats = s.heartbeats === true;
    mkdirSync(dirname(file), { recursive: true });
  }

  /** The next sequence of this agent's messages. */
  seq(): number {
    if (this.next === 0 || this.next >= this.reservedTo) {
      this.next = Math.max(this.next, this.reservedTo, 1);
      this.reservedTo = this.next + SEQ_BLOCK;
      this.save();
    }
    return this.next++;
  }

  /**
   * Notes a push before it is sent: an ack naming it (`seq`, `tip`) acknowledges `d`. Held in memory until
   * {@link flush} (once a batch of pushes): a push lost with a crash before that only has its ack passed
   * over, and the next push's ack covers what it carried (docs/decisions/495-hop-v2-on-the-agent-link.md).
   */
  notePush(seq: number, tip: Uint8Array, d: PushedDelta): void {
    this.pushes.push({ seq, tip: toHex(tip), doc: d.doc, heads: d.heads });
    if (this.pushes.length > PUSHES_KEPT) this.pushes.splice(0, this.pushes.length - PUSHES_KEPT);
    this.unsaved = true;
  }

  /** Writes the pushes noted since the last write, if any: once after each batch of pushes. */
  flush(): void {
    if (this.unsaved) this.save();
  }

  /** What the push an ack names carried; null: not a push of this agent's (another agent's, or forgotten). */
  acked(upTo: number, tip: Uint8Array, heartbeats = false): PushedDelta | null {
    if (heartbeats && !this.rebuildsHeartbeats) {
      this.rebuildsHeartbeats = true;
      this.save();
    }
    const hex = toHex(tip);
    const p = this.pushes.find((x) => x.seq === upTo && x.tip === hex);
    return p ? { doc: p.doc, heads: p.heads } : null;
  }

  /** Called after a link's state changed (what it carries may have). */
  onLinks: (() => void) | null = null;

  /** Notes what `url` answered the registration (v2 and its node, or v1 and why). */
  noteLink(url: string, link: Wire2LinkState): void {
    this.links[url] = link;
    this.save();
    this.onLinks?.();
  }

  /**
   * Whether every one of `urls` last registered this agent on v2 and said it carries `what` down (decision
   * 505): only then may the agent tell the hub it reads it, which the hub then sends whichever way it goes.
   */
  everyLinkCarries(urls: readonly string[], what: string): boolean {
    return (
      urls.length > 0 &&
      urls.every((u) => {
        const l = this.links[u];
        return l?.wire === 2 && l.carries?.includes(what) === true;
      })
    );
  }

  /** Notes what carries the v2 exchanges with `url` now (h2c refused on the way: HTTP/1.1, and why). */
  noteCarrier(url: string, c: { carrier: 'h2c' | 'http/1.1'; reason?: string }): void {
    const link = this.links[url];
    if (link?.wire !== 2) return;
    const { reason: _old, ...rest } = link;
    this.links[url] = { ...rest, ...c };
    this.save();
  }

  private save(): void {
    const saved: Saved = {
      next: this.reservedTo,
      pushes: this.pushes,
      links: this.links,
      ...(this.rebuildsHeartbeats ? { heartbeats: true } : {}),
    };
    writeFileSync(`${this.file}.tmp`, JSON.stringify(saved));
    renameSync(`${this.file}.tmp`, this.file);
    this.unsaved = false;
  }
}
