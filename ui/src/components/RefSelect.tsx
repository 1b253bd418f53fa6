import { useLoad } from '../hooks/useLoad.js';
import { useServices } from '../services.js';

/**
 * Which ref's plans the matrix shows: each component's default ref (the usual view), or any of the refs
 * the hub holds plans of (`GET /api/refs`, newest first). A ref named in the URL stays selectable even
 * before the hub lists it.
 */
export function RefSelect({
  value,
  onChange,
}: {
  value: string | null;
  onChange: (ref: string | null) => void;
}) {
  const { api } = useServices();
  const [loaded] = useLoad(() => api.refs(), [api]);
  const refs = loaded.state === 'ok' ? loaded.data.refs.map((r) => r.ref) : [];
  if (value && !refs.includes(value)) refs.unshift(value);
  return (
    <label>
      Ref
      <select
        value={value ?? ''}
        onChange={(e) => onChange((e.currentTarget as HTMLSelectElement).value || null)}
        aria-describedby={loaded.state === 'error' ? 'ref-unknown' : undefined}
      >
        <option value="">default refs</option>
        {refs.map((r) => (
          <option key={r} value={r}>
            {r}
          </option>
        ))}
      </select>
      {loaded.state === 'error' ? (
        <span id="ref-unknown" class="sr-only">
          the hub did not list its refs: {loaded.message}
        </span>
      ) : null}
    </label>
  );
}
