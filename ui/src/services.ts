import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Api } from './ports/Api.js';
import type { Clock } from './ports/Clock.js';
import type { LiveEvents } from './ports/LiveEvents.js';

/** What the components reach the world through: injected by `main.tsx`, replaced in tests. */
export interface Services {
  api: Api;
  clock: Clock;
  live: LiveEvents;
}

export const ServicesContext = createContext<Services | null>(null);

export function useServices(): Services {
  const s = useContext(ServicesContext);
  if (!s) throw new Error('useServices: render inside <ServicesContext.Provider> (see main.tsx)');
  return s;
}
