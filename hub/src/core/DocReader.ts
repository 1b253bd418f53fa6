import type * as A from '@automerge/automerge';
import { plainDocValue, unpackDocEntry } from '@driftline/protocol';

/** Automerge's document handle (`A.getBackend`): reads and merges without materialising the document in JS. */
export type Backend = ReturnType<typeof A.getBackend>;

/** What changed in an agent document between two sets of heads. */
export interface Touched {
  runs: Set<string>;
  cells: Set<string>;
  facts: boolean;
  /** The declared cadences changed: every cell's expected interval may have moved. */
  cadence: boolean;
}

/** What changed, from Automerge patches (whole-document diff). */
export function touched(patches: readonly A.Patch[]): Touched {
  const runs = new Set<string>();
  const cells = new Set<string>();
  let facts = false;
  let cadence = false;
  for (const p of patches) {
    const [top, key] = p.path;
    if (top === 'runs' && typeof key === 'string') runs.add(key);
    else if (top === 'cells' && typeof key === 'string') cells.add(key);
    else if (top === 'facts') {
      facts = true;
      if (key === undefined || key === 'cadenceS') cadence = true;
    }
  }
  return { runs, cells, facts, cadence };
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

  constructor(
    private readonly h: Backend,
    private readonly heads?: A.Heads,
  ) {}

  /** A scalar at the document root (`site`, `agent`), as a plain string or number. */
  root(key: string): unknown {
    const t = this.h.getWithType('_root', key, this.heads) as [string, unknown] | null;
    if (!t) return undefined;
    if (t[0] === 'text') return this.h.text(t[1] as string, this.heads);
    if (t[0] === 'map' || t[0] === 'list')
      return plainDocValue(this.h.materialize(t[1] as string, this.heads));
    return plainDocValue(t[1]);
  }

  private objId(top: string): string | null {
    if (!this.ids.has(top)) {
      const t = this.h.getWithType('_root', top, this.heads) as [string, unknown] | null;
      this.ids.set(top, t && t[0] === 'map' ? (t[1] as string) : null);
    }
    return this.ids.get(top) ?? null;
  }

  keys(top: 'runs' | 'cells'): string[] {
    const id = this.objId(top);
    return id ? this.h.keys(id, this.heads) : [];
  }

  /** Reads a whole top-level map in one call: cheaper per entry when most entries are wanted. */
  preload(top: 'runs' | 'cells'): void {
    const id = this.objId(top);
    if (id && !this.maps.has(top))
      this.maps.set(
        top,
        Object.fromEntries(
          Object.entries(this.h.materialize(id, this.heads) as Record<string, unknown>).map(([k, v]) => [
            k,
            unpackDocEntry(v),
          ]),
        ),
      );
  }

  /** `runs[key]` or `cells[key]` as plain data; undefined when absent. */
  entry(top: 'runs' | 'cells', key: string): unknown {
    const whole = this.maps.get(top);
    if (whole) return whole[key];
    const k = `${top}\u0000${key}`;
    if (this.cache.has(k)) return this.cache.get(k);
    const id = this.objId(top);
    const t = id ? (this.h.getWithType(id, key, this.heads) as [string, unknown] | null) : null;
    const v =
      t === null
        ? undefined
        : t[0] === 'map' || t[0] === 'list'
          ? plainDocValue(this.h.materialize(t[1] as string, this.heads))
          : t[0] === 'text'
            ? this.h.text(t[1] as string, this.heads)
            : unpackDocEntry(t[1]);
    this.cache.set(k, v);
    return v;
  }

  facts(): unknown {
    return this.root('facts');
  }

  /**
   * Which runs, cells and facts changed from `before` to `after` (the reader's heads). Asks Automerge
   * for the changed keys of `runs` only (not their contents), and for patches under `cells` and
   * `facts` only, instead of a whole-document diff; from empty heads everything present is new.
   */
  touched(before: A.Heads, after: A.Heads): Touched {
    if (before.length === 0) {
      const facts = this.objIdOf('facts');
      return {
        runs: new Set(this.keys('runs')),
        cells: new Set(this.keys('cells')),
        facts,
        cadence: facts,
      };
    }
    try {
      const root = new Set(
        this.h.diffPath('_root', before, after, { recursive: false }).map((p) => p.path[0] as string),
      );
      const under = (top: 'runs' | 'cells', recursive: boolean): Set<string> => {
        if (root.has(top)) return new Set(this.keys(top));
        const id = this.objId(top);
        if (!id) return new Set();
        const out = new Set<string>();
        for (const p of this.h.diffPath(id, before, after, { recursive })) {
          const key = p.path[p.path.indexOf(top) + 1];
          if (typeof key === 'string') out.add(key);
        }
        return out;
      };
      // Agents write only the facts that changed (queue depth, report time): a cadence change is rare.
      const factsId = this.objIdOf('facts') ? this.objId('facts') : null;
      const factPatches =
        root.has('facts') || factsId === null
          ? []
          : this.h.diffPath(factsId, before, after, { recursive: true });
      const facts = root.has('facts') || factPatches.length > 0;
      const cadence =
        root.has('facts') || factPatches.some((p) => p.path[p.path.indexOf('facts') + 1] === 'cadenceS');
      return { runs: under('runs', false), cells: under('cells', true), facts, cadence };
    } catch {
      // A map that did not exist at `before` (not how agents write): fall back to the whole diff.
      return touched(this.h.diff(before, after));
    }
  }

  private objIdOf(top: string): boolean {
    return this.objId(top) !== null;
  }
}
