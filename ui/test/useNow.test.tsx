import { render, screen } from '@testing-library/preact';
import { describe, expect, it } from 'vitest';
import { formatAgo } from '../src/core/time.js';
import { useNow } from '../src/hooks/useNow.js';
import { type Services, ServicesContext } from '../src/services.js';
import { ManualClock } from './support/manualClock.js';

function Age({ iso }: { iso: string }) {
  return <p>{formatAgo(iso, useNow())}</p>;
}

describe('useNow', () => {
  it('renders a fact that arrived between ticks against the time now, not the last tick', () => {
    const clock = new ManualClock(Date.parse('2026-11-27T09:00:00Z'));
    const services = { clock } as unknown as Services;
    const view = (iso: string) => (
      <ServicesContext.Provider value={services}>
        <Age iso={iso} />
      </ServicesContext.Provider>
    );
    const r = render(view(new Date(clock.now() - 60_000).toISOString()));
    expect(screen.getByText('1 min ago')).toBeTruthy();
    // 8 s on (no tick yet: every 10 s) a live update brings a fact planned right now
    clock.advance(8000);
    r.rerender(view(new Date(clock.now()).toISOString()));
    expect(screen.getByText('just now')).toBeTruthy();
  });
});
