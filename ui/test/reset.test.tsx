import type { HubEvent } from '@driftline/protocol';
import { act, screen, waitFor } from '@testing-library/preact';
import { afterEach, describe, expect, it } from 'vitest';
import { FetchEventStream } from '../src/adapters/http/FetchEventStream.js';
import { smallWorld } from './support/fixtures.js';
import { ManualClock } from './support/manualClock.js';
import { MockHub } from './support/mockHub.js';
import { renderApp } from './support/renderApp.js';

let teardown = () => {};
afterEach(() => teardown());

/** A fetch answering one event stream made of `text`, then holding it open. */
const streamOf =
  (text: string): typeof fetch =>
  async () =>
    new Response(
      new ReadableStream<Uint8Array>({
        start: (c) => c.enqueue(new TextEncoder().encode(text)),
      }),
      { headers: { 'content-type': 'text/event-stream' } },
    );

describe('a reset on the live stream', () => {
  it('reaches subscribers as reset, and so does an older hub’s reload', async () => {
    for (const [text, reason] of [
      ['id: k2x-4\nevent: reset\ndata: {"type":"reset","reason":"restarted"}\n\n', 'restarted'],
      ['event: reload\ndata: {}\n\n', 'behind'],
    ] as const) {
      const live = new FetchEventStream({
        url: 'http://hub.test/api/events',
        clock: new ManualClock(0),
        fetchFn: streamOf(text),
      });
      const got: HubEvent[] = [];
      live.subscribe((e) => got.push(e));
      await waitFor(() => expect(got).toEqual([{ type: 'reset', reason }]));
      live.close();
    }
  });

  it('makes the dashboard read the matrix again', async () => {
    const hub = new MockHub(smallWorld());
    const r = renderApp(hub, '?view=matrix');
    teardown = r.teardown;
    await screen.findByRole('grid');
    await waitFor(() => expect(hub.openStreams).toBe(1));
    const matrixReads = () => hub.requests.filter((q) => q.path.startsWith('GET /api/matrix')).length;
    // what is on screen (prod at its 3 sites, one window), then one read per environment (prod, staging)
    await waitFor(() => expect(matrixReads()).toBe(3));
    act(() => hub.emit({ type: 'reset', reason: 'restarted' }));
    await waitFor(() => expect(matrixReads()).toBe(6));
    await screen.findByRole('grid');
  });
});
