import { useEffect, useState } from 'preact/hooks';

export type Loaded<T> = { state: 'loading' } | { state: 'ok'; data: T } | { state: 'error'; message: string };

/** Runs `load` whenever `deps` change; ignores answers that arrive after the deps moved on. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): [Loaded<T>, (d: T) => void] {
  const [result, setResult] = useState<Loaded<T>>({ state: 'loading' });
  useEffect(() => {
    let current = true;
    setResult({ state: 'loading' });
    load().then(
      (data) => current && setResult({ state: 'ok', data }),
      (e: Error) => current && setResult({ state: 'error', message: e.message }),
    );
    return () => {
      current = false;
    };
  }, deps);
  return [result, (data: T) => setResult({ state: 'ok', data })];
}
