import type { HubEvent } from '@driftline/protocol';
import { until } from '@driftline/protocol/testing';
import { setupServer } from 'msw/node';
import { afterEach, describe, expect, it } from 'vitest';
import { cell, smallWorld } from '../../../test/support/fixtures.js';
import { ManualClock } from '../../../test/support/manualClock.js';
import { MockHub } from '../../../test/support/mockHub.js';
import { mswHandlers } from '../../../test/support/msw.js';
import { FetchEventStream } from './FetchEventStream.js';

const URL_ = 'http://dashboard.test/api/events';
let stop = () => {};
afterEach(() => stop());

describe('FetchEventStream', () => {
  it('delivers validated events and goes live', async () => {
    const hub = new MockHub(smallWorld());
    const server = setupServer(...mswHandlers(hub));
    server.listen({ onUnhandledRequest: 'error' });
    const clock = new ManualClock(0);
    const live = new FetchEventStream({ url: URL_, clock });
    stop = () => {
      live.close();
      server.close();
    };
    const got: HubEvent[] = [];
    live.subscribe((e) => got.push(e));
    await until(() => hub.openStreams === 1 && live.state() === 'live', 'the stream to open');
    hub.emit({ type: 'cell-updated', cell: cell({ site: 'ship-7', environment: 'prod', component: 'x' }) });
    await until(() => got.length === 1, 'the event');
    expect(got[0]?.type).toBe('cell-updated');
  });
});

describe('FetchEventStream without a session', () => {
  it('stops retrying on a 401 and connects again, at once, on reconnect', async () => {
    const hub = new MockHub(smallWorld());
    hub.session = null;
    const server = setupServer(...mswHandlers(hub));
    server.listen({ onUnhandledRequest: 'error' });
    const clock = new ManualClock(0);
    const live = new FetchEventStream({ url: URL_, clock });
    stop = () => {
      live.close();
      server.close();
    };
    await until(() => live.state() === 'signed-out', 'the refusal');
    expect(clock.pending).toBe(0);
    hub.session = { user: 'ada', roles: ['viewer'], csrf: 'c', via: 'session' };
    live.reconnect();
    await until(() => hub.openStreams === 1 && live.state() === 'live', 'the stream to open');
    live.disconnect();
    await until(() => hub.openStreams === 0, 'the stream to close');
    expect(live.state()).toBe('signed-out');
  });
});
