import { type CellStatus, PLAN_STATUSES } from '@driftline/protocol';
import { useEffect, useState } from 'preact/hooks';
import type { Filters } from '../core/route.js';
import { statusLook } from '../core/status.js';
import { RefSelect } from './RefSelect.js';

interface Props {
  filters: Filters;
  onChange: (f: Filters, replace?: boolean) => void;
  sites: string[];
  environments: string[];
  components: string[];
  pivot: string | null;
  onPivot: (component: string) => void;
}

const STATUSES: readonly CellStatus[] = [...PLAN_STATUSES, 'no-data'];

/**
 * `2025-01-02T03:04:05.000Z` ↔ the box's ISO text `2025-01-02 03:04` (UTC). A text box, not `datetime-local`,
 * whose browser shows the reader's locale (`01/02/2025, 03:04 AM`) where everything else on screen is ISO.
 */
const toIsoInput = (iso: string | null) => (iso ? iso.slice(0, 16).replace('T', ' ') : '');

/** The box's text as a time: `2025-01-02 03:04`, `2025-01-02T03:04`, `…:05`, `…Z`; null when empty or not one. */
export function parseIsoInput(text: string): number | null {
  const m = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2})?)Z?$/.exec(text.trim());
  if (!m) return null;
  const t = Date.parse(`${m[1]}T${m[2]}Z`);
  return Number.isNaN(t) ? null : t;
}

/** Filters, search, pivot and the point-in-time control; every change is written to the URL. */
export function FilterBar({ filters, onChange, sites, environments, components, pivot, onPivot }: Props) {
  const [q, setQ] = useState(filters.q);
  useEffect(() => setQ(filters.q), [filters.q]);
  return (
    <form class="filters" aria-label="Filter the matrix" onSubmit={(e) => e.preventDefault()}>
      <RefSelect value={filters.ref} onChange={(ref) => onChange({ ...filters, ref })} />
      <label>
        Search
        <input
          type="search"
          value={q}
          placeholder="component or site"
          onInput={(e) => {
            const v = (e.currentTarget as HTMLInputElement).value;
            setQ(v);
            onChange({ ...filters, q: v }, true);
          }}
        />
      </label>
      <label>
        Site
        <select
          value={filters.site}
          onChange={(e) => onChange({ ...filters, site: (e.currentTarget as HTMLSelectElement).value })}
        >
          <option value="">all sites</option>
          {sites.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </label>
      <label>
        Environment
        <select
          value={filters.environment}
          onChange={(e) =>
            onChange({ ...filters, environment: (e.currentTarget as HTMLSelectElement).value })
          }
        >
          <option value="">all environments</option>
          {environments.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </label>
      <label>
        Status
        <select
          value={filters.status ?? ''}
          onChange={(e) => {
            const v = (e.currentTarget as HTMLSelectElement).value;
            onChange({ ...filters, status: STATUSES.find((s) => s === v) ?? null });
          }}
        >
          <option value="">any status</option>
          {STATUSES.map((s) => (
            <option key={s} value={s}>
              {statusLook(s).label}
            </option>
          ))}
        </select>
      </label>
      <label class="check">
        <input
          type="checkbox"
          checked={filters.staleOnly}
          onChange={(e) => onChange({ ...filters, staleOnly: (e.currentTarget as HTMLInputElement).checked })}
        />
        stale only
      </label>
      <label>
        Pivot on component
        <select value={pivot ?? ''} onChange={(e) => onPivot((e.currentTarget as HTMLSelectElement).value)}>
          <option value="">(grouped by site)</option>
          {components.map((c) => (
            <option key={c} value={c}>
              {c}
            </option>
          ))}
        </select>
      </label>
      <label>
        As known at (UTC)
        <input
          type="text"
          inputMode="numeric"
          placeholder="YYYY-MM-DD hh:mm"
          size={16}
          value={toIsoInput(filters.at)}
          onChange={(e) => {
            const t = parseIsoInput((e.currentTarget as HTMLInputElement).value);
            onChange({ ...filters, at: t === null ? null : new Date(t).toISOString() });
          }}
        />
      </label>
    </form>
  );
}
