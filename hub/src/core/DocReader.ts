import type * as A from '@automerge/automerge';
import {
  docKeyProblem,
  immutableText,
  overlayConfirmed,
  plainDocValue,
  unpackDocEntry,
} from '@driftline/protocol';

/** Automerge's document handle (`A.getBackend`): reads and merges without materialising the document in JS. */
export type Backend = ReturnType<typeof A.getBackend>;

/** What changed in an agent document between two sets of heads. */
export interface Touched {
  runs: Set<string>;
  cells: Set<string>;
  facts: boolean;
  /** The declared cadences changed: every cell's expected interval may have moved. */
  cadence: boolean;
  /** The agent's publication delivery states (the document's `bundles` map) changed. */
  publications: boolean;
  /** The agent's apply records (`applies`) changed. */
  applies: boolean;
  /** The plan requests the agent says it received (`requests`) changed (decision 230). */
  requests: boolean;
  /**
   * Keys of `runs`, `cells` and `confirmed` that changed but can key no entry (`__proto__`, a cell key
   * that is not environment/component): never read, named here with why (decision 570).
   */
  refused: { key: string; problem: string }[];
}

/**
 * Reads an agent document straight from its Automerge handle, at given heads (default: current),
 * touching only the keys asked for: the hub never materialises whole documents in JS, whose cost
 * follows the document instead of the change. Values come back as plain data (packed entries decoded,
 * ImmutableString → string: protocol's `unpackDocEntry`); reads are cached.
 */
export class DocReader {
  private readonly ids = new Map<string, string | null>();
  private readonly maps = new Map<string, Record<string, unknown>>();
  private readonly cache = new Map<string, unknown>();
  /** Packed entries (decision 008) as their JSON text, not parsed yet, by `top\0key`. */
  private readonly texts = new Map<string, string>();

  constructor(
    private readonly h: Backend,
    private readonly heads?: A.Heads,
  ) {}

  /** A scalar at the document root (`site`, `agent`), as a plain string or number. */
  root(key: string): unknown {
    return this.read('_root', key, plainDocValue);
  }

  /** `obj[key]` as plain data: objects materialised, text as a string, scalars through `scalar`. */
  private read(obj: string, key: string, scalar: (v: unknown) => unknown): unknown {
    const t = this.h.getWithType(obj, key, this.heads) as [string, unknown] | null;
    if (!t) return undefined;
    if (t[0] === 'text') return this.h.text(t[1] as string, this.heads);
    if (t[0] === 'map' || t[0] === 'list')
      return plainDocValue(this.h.materialize(t[1] as string, this.heads));
    return scalar(t[1]);
  }

  private objId(top: string): string | null {
    if (!this.ids.has(top)) {
      const t = this.h.getWithType('_root', top, this.heads) as [string, unknown] | null;
      this.ids.set(top, t && t[0] === 'map' ? (t[1] as string) : null);
    }
    return this.ids.get(top) ?? null;
  }

  /** The keys of a top-level map that can key an entry (`docKeyProblem`); the others are never read. */
  keys(top: 'runs' | 'cells' | 'confirmed'): string[] {
    const kind = top === 'runs' ? 'runs' : 'cells';
    return this.rawKeys(top).filter((k) => docKeyProblem(kind, k) === null);
  }

  private rawKeys(top: 'runs' | 'cells' | 'confirmed'): string[] {
    const id = this.objId(top);
    return id ? this.h.keys(id, this.heads) : [];
  }

  /** Reads a whole top-level map in one call: cheaper per entry when most entries are wanted. */
  preload(top: 'runs' | 'cells'): void {
    const id = this.objId(top);
    if (id && !this.maps.has(top))
      this.maps.set(
        top,
        // A `__proto__` key made the materialised map's prototype, not an own entry: only own entries
        // with a good key are taken (decision 570).
        Object.fromEntries(
          Object.entries(this.h.materialize(id, this.heads) as Record<string, unknown>)
            .filter(([k]) => docKeyProblem(top, k) === null)
            .map(([k, v]) => [k, unpackDocEntry(v)]),
        ),
      );
  }

  /**
   * `runs[key]` or `cells[key]` as plain data; undefined when absent. A cell comes with its
   * `confirmed[key]` entry applied (an unchanged re-plan written apart from the cell, decision 330).
   */
  entry(top: 'runs' | 'cells', key: string): unknown {
    const v = this.stored(top, key);
    return top === 'cells' && v !== undefined ? overlayConfirmed(v, this.stored('confirmed', key)) : v;
  }

  /**
   * `runs[key]` or `cells[key]` as its packed JSON text (decision 008), not parsed, and for a cell
   * without its confirmed entry applied (`confirmedEntry`); undefined when the entry is absent or not a
   * packed string (then read it with `entry`). A merge worker hands the text on: a string crosses to the
   * hub's thread for the price of a copy, a parsed entry for a structured clone of every field.
   */
  packedText(top: 'runs' | 'cells', key: string): string | undefined {
    const k = `${top}\u0000${key}`;
    const known = this.texts.get(k);
    if (known !== undefined || this.cache.has(k) || this.maps.has(top)) return known;
    const id = this.objId(top);
    const t = id ? (this.h.getWithType(id, key, this.heads) as [string, unknown] | null) : null;
    if (t?.[0] !== 'str' || typeof t[1] !== 'string') return undefined;
    this.texts.set(k, t[1]);
    return t[1];
  }

  /** The raw `confirmed[key]` entry (a string when it is one), to apply with `overlayConfirmed`. */
  confirmedEntry(key: string): unknown {
    const v = this.stored('confirmed', key);
    const val = v !== null && typeof v === 'object' ? (v as { val?: unknown }).val : undefined;
    return typeof val === 'string' ? val : v;
  }

  /** Whether the document has a `confirmed` map: its agent writes unchanged re-plans there once told the hub reads it. */
  hasConfirmed(): boolean {
    return this.objId('confirmed') !== null;
  }

  private stored(top: 'runs' | 'cells' | 'confirmed', key: string): unknown {
    const whole = this.maps.get(top);
    if (whole) return Object.hasOwn(whole, key) ? whole[key] : undefined;
    const k = `${top}\u0000${key}`;
    if (this.cache.has(k)) return this.cache.get(k);
    const text = this.texts.get(k);
    if (text !== undefined) {
      const v = unpackDocEntry(text);
      this.cache.set(k, v);
      return v;
    }
    const id = this.objId(top);
    const v = !id
      ? undefined
      : top === 'confirmed'
        ? this.confirmedKeys().has(key)
          ? this.scalar(id, key)
          : undefined
        : this.read(id, key, unpackDocEntry);
    this.cache.set(k, v);
    return v;
  }

  private confirmedSet: Set<string> | null = null;

  /**
   * The keys of the `confirmed` map, read once: most cells a merge touches have no entry (a changed plan,
   * or an agent that writes confirmations into the cell), and one read of the keys saves a lookup each.
   */
  private confirmedKeys(): Set<string> {
    this.confirmedSet ??= new Set(this.keys('confirmed'));
    return this.confirmedSet;
  }

  /**
   * `obj[key]` when it is a scalar, else null: a `confirmed` entry is one string, and anything else an
   * agent put there is never walked (`overlayConfirmed` caps and validates the string).
   */
  private scalar(obj: string, key: string): unknown {
    const t = this.h.getWithType(obj, key, this.heads) as [string, unknown] | null;
    if (!t) return undefined;
    return t[0] === 'map' || t[0] === 'list' || t[0] === 'text' ? null : t[1];
  }

  /**
   * The agent's facts as plain data; without `cadenceS` when `omitCadence` (a caller that holds the
   * declared cadences and knows they did not change: with hundreds of cells they are most of the facts).
   */
  facts(omitCadence = false): unknown {
    const id = this.objId('facts');
    if (!id || !omitCadence) return this.root('facts');
    const out: Record<string, unknown> = {};
    for (const k of this.h.keys(id, this.heads)) {
      if (k !== 'cadenceS') out[k] = this.read(id, k, plainDocValue);
    }
    return out;
  }

  /**
   * Which runs, cells and facts changed from `before` to `after` (the reader's heads), from one
   * `diff` of the two. Agents write each run and cell as one packed value (decision 008), so the
   * patches carry the new entries themselves: they are decoded once here and `entry` serves them
   * without reading the document again. Entries written as maps (older agents) are only named, and
   * read by `entry` as before. `patches`: that diff when the caller has it already (Automerge's
   * `diffIncremental` after a merge, see mergeDoc).
   */
  touched(before: A.Heads, after: A.Heads, patches?: readonly A.Patch[]): Touched {
    const runs = new Set<string>();
    const cells = new Set<string>();
    let facts = false;
    let cadence = false;
    let publications = false;
    let applies = false;
    let requests = false;
    const refused: Touched['refused'] = [];
    const good = (top: 'runs' | 'cells' | 'confirmed', key: string): boolean => {
      const problem = docKeyProblem(top === 'runs' ? 'runs' : 'cells', key);
      if (problem && !refused.some((r) => r.key === `${top}.${key}`))
        refused.push({ key: `${top}.${key}`, problem });
      return problem === null;
    };
    for (const p of patches ?? this.h.diff(before, after)) {
      const [top, key] = p.path;
      if (top === 'bundles') publications = true;
      else if (top === 'applies') applies = true;
      else if (top === 'requests') requests = true;
      else if (top === 'confirmed') {
        // An unchanged re-plan (decision 330): the cell it confirms is read again, with it applied.
        if (typeof key !== 'string') {
          for (const k of this.rawKeys('confirmed')) if (good(top, k)) cells.add(k);
          continue;
        }
        if (!good(top, key)) continue;
        cells.add(key);
        const v = p.action === 'put' && p.path.length === 2 ? p.value : undefined;
        if (typeof v === 'string' || (v && typeof v === 'object' && 'val' in v))
          this.cache.set(`confirmed\u0000${key}`, v);
      } else if (top === 'runs' || top === 'cells') {
        if (typeof key !== 'string') {
          // The map itself was (re)created: everything in it is new.
          for (const k of this.rawKeys(top)) if (good(top, k)) (top === 'runs' ? runs : cells).add(k);
          continue;
        }
        if (!good(top, key)) continue;
        (top === 'runs' ? runs : cells).add(key);
        // A packed entry (a scalar string; bytes in the first packed form) comes whole with the patch:
        // its text is kept, parsed only when read (`entry`), or handed on as text (`packedText`).
        const v = p.action === 'put' && p.path.length === 2 ? p.value : undefined;
        if (typeof v === 'string' || v instanceof Uint8Array || (v && typeof v === 'object' && 'val' in v)) {
          const k = `${top}\u0000${key}`;
          const text = typeof v === 'string' ? v : immutableText(v);
          this.texts.delete(k);
          this.cache.delete(k);
          if (text !== null) this.texts.set(k, text);
          else this.cache.set(k, unpackDocEntry(v));
        }
      } else if (top === 'facts') {
        facts = true;
        if (key === undefined || key === 'cadenceS') cadence = true;
      }
    }
    return { runs, cells, facts, cadence, publications, applies, requests, refused };
  }
}
