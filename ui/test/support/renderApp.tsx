import { cleanup, render } from '@testing-library/preact';
import { setupServer } from 'msw/node';
import { FetchEventStream } from '../../src/adapters/http/FetchEventStream.js';
import { HttpApi } from '../../src/adapters/http/HttpApi.js';
import { App } from '../../src/components/App.js';
import { type Services, ServicesContext } from '../../src/services.js';
import { NOW } from './fixtures.js';
import { ManualClock } from './manualClock.js';
import type { MockHub } from './mockHub.js';
import { mswHandlers } from './msw.js';

export const ORIGIN = 'http://dashboard.test';

/** Renders the whole app at `search` against a MockHub through msw, with a hand-moved clock. */
export function renderApp(hub: MockHub, search = '', opts: { clockStart?: number } = {}) {
  const lastEventIds: (string | null)[] = [];
  const server = setupServer(...mswHandlers(hub, { lastEventIds }));
  server.listen({ onUnhandledRequest: 'error' });
  window.history.replaceState(null, '', `/${search}`);
  const clock = new ManualClock(opts.clockStart ?? NOW);
  const live = new FetchEventStream({
    url: `${ORIGIN}/api/events`,
    clock,
    initialDelayMs: 1000,
    autoStart: false,
  });
  // After teardown msw no longer answers: a read a timer starts then would go to the network
  // (`getaddrinfo ENOTFOUND dashboard.test` once a slow test's teardown ran). It fails here instead.
  let ended = false;
  const fetchFn: typeof fetch = (input, init) =>
    ended ? Promise.reject(new TypeError('the test ended: no request leaves it')) : fetch(input, init);
  const services: Services = { api: new HttpApi(ORIGIN, fetchFn), clock, live };
  const view = render(
    <ServicesContext.Provider value={services}>
      <App />
    </ServicesContext.Provider>,
  );
  const teardown = () => {
    ended = true;
    live.close();
    cleanup();
    server.close();
  };
  return { ...view, clock, live, server, lastEventIds, teardown };
}
