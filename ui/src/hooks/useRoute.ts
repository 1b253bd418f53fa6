import { useCallback, useEffect, useState } from 'preact/hooks';
import { formatRoute, parseRoute, type Route } from '../core/route.js';

/** The route in the address bar; `go` pushes (or replaces, for typing in filters) a history entry. */
export function useRoute(): [Route, (r: Route, opts?: { replace?: boolean }) => void] {
  const [route, setRoute] = useState(() => parseRoute(window.location.search));
  useEffect(() => {
    const onPop = () => setRoute(parseRoute(window.location.search));
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);
  const go = useCallback((r: Route, opts: { replace?: boolean } = {}) => {
    const url = `${window.location.pathname}${formatRoute(r)}`;
    if (opts.replace) window.history.replaceState(null, '', url);
    else window.history.pushState(null, '', url);
    setRoute(r);
  }, []);
  return [route, go];
}

/** Props for an `<a>` that navigates inside the app without a reload but stays a real, shareable link. */
export function linkProps(route: Route, go: (r: Route) => void) {
  return {
    href: formatRoute(route) || '?',
    onClick: (e: MouseEvent) => {
      if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
      e.preventDefault();
      go(route);
    },
  };
}
