import { makeBundle } from '@driftline/hop/testing';
import { describe, expect, it } from 'vitest';
import { MemoryBlobUploader } from '../adapters/memory/MemoryBlobUploader.js';
import { MemoryCustody } from '../adapters/memory/MemoryCustody.js';
import { MemoryUpstream } from '../adapters/memory/MemoryUpstream.js';
import { BLOB_LOST } from '../ports/BlobUploader.js';
import { BLOB_ASIDE_MS, forwardBlob } from './BlobForwarder.js';
import { windowsOf } from './contactPlan.js';
import { describeBundle } from './describeBundle.js';
import type { ForwardEvent } from './Forwarder.js';
import { forwardRound } from './forwardRound.js';
import type { UpstreamSlot } from './upstreamSlot.js';

const T0 = Date.parse('2025-01-01T00:30:00Z');
const opts = { batchBytes: 1 << 20, batchCount: 10, backoffBaseMs: 1000, backoffMaxMs: 60_000, idleMs: 5000 };

/** What the uploader sent, as `<upstream>:<first letter of the sha256>`. */
const sent = (u: MemoryBlobUploader) => u.uploaded.map((x) => `${x.upstream}:${x.sha256[0]}`);
const upstream = (name: string) => new MemoryUpstream(name);

function setup(slots: UpstreamSlot[]) {
  const custody = new MemoryCustody();
  custody.blobs.record('a'.repeat(64), 10, '/blobs/a', {}, 'ship-7', T0);
  custody.blobs.record('b'.repeat(64), 10, '/blobs/b', {}, 'ship-7', T0 + 1);
  const uploader = new MemoryBlobUploader();
  const events: ForwardEvent[] = [];
  const removed: string[] = [];
  const deps = {
    custody,
    slots,
    uploader,
    opts,
    now: () => T0,
    random: () => 0.5,
    emit: (e: ForwardEvent) => events.push(e),
    removeFile: async (p: string) => void removed.push(p),
  };
  return { custody, uploader, events, removed, deps };
}

describe('forwarding blobs', () => {
  it('uploads the oldest blob to the first ready upstream; it leaves custody and its file goes', async () => {
    const s = setup([{ upstream: upstream('hub'), plan: { windows: [] }, failures: 2, retryAt: 0 }]);
    expect(await forwardBlob(s.deps)).toBe(true);
    expect(sent(s.uploader)).toEqual(['hub:a']);
    expect(s.removed).toEqual(['/blobs/a']);
    expect(s.events).toEqual([
      { type: 'blob-forwarded', upstream: 'hub', sha256: 'a'.repeat(64), bytes: 10 },
    ]);
    expect(s.custody.blobs.pending('hub', 10).map((b) => b.sha256[0])).toEqual(['b']);
    expect(s.deps.slots[0]?.failures).toBe(0);
  });

  it('backs the upstream off after a failed upload, keeps the resume URL, and fails over to the next', async () => {
    const slots: UpstreamSlot[] = [
      { upstream: upstream('relay-b'), plan: { windows: [] }, failures: 0, retryAt: 0 },
      { upstream: upstream('hub'), plan: { windows: [] }, failures: 0, retryAt: 0 },
    ];
    const s = setup(slots);
    s.uploader.failWith = { ok: false, code: 'unreachable', message: 'reset', retryable: true };
    expect(await forwardBlob(s.deps)).toBe(false);
    expect(slots.map((x) => x.retryAt - T0)).toEqual([500, 500]);
    expect(s.events.map((e) => e.type === 'failed' && [e.upstream, e.retryable])).toEqual([
      ['relay-b', true],
      ['hub', true],
    ]);
    expect(s.custody.blobs.pending('hub', 1)[0]?.url).toBe(`http://hub/v1/uploads/${'a'.repeat(64)}`);
    s.uploader.failWith = null;
    expect(await forwardBlob(s.deps)).toBe(false); // both still backing off
    expect(await forwardBlob({ ...s.deps, now: () => T0 + 500 })).toBe(true);
    expect(sent(s.uploader)).toEqual(['relay-b:a']);
  });

  it('sets aside a blob the upstream refuses for good and goes on with the next, without backing off', async () => {
    const s = setup([{ upstream: upstream('hub'), plan: { windows: [] }, failures: 0, retryAt: 0 }]);
    s.uploader.failWith = {
      ok: false,
      code: 'payload-too-large',
      message: 'HTTP 413 payload-too-large: over the cap',
      retryable: false,
      status: 413,
    };
    expect(await forwardBlob(s.deps)).toBe(true);
    expect(s.deps.slots[0]?.retryAt).toBe(0);
    expect(s.events).toEqual([
      {
        type: 'blob-set-aside',
        upstream: 'hub',
        sha256: 'a'.repeat(64),
        code: 'payload-too-large',
        reason: 'HTTP 413 payload-too-large: over the cap',
        retryAt: T0 + BLOB_ASIDE_MS,
      },
    ]);
    s.uploader.failWith = null;
    expect(await forwardBlob(s.deps)).toBe(true);
    expect(sent(s.uploader)).toEqual(['hub:b']);
    expect(await forwardBlob(s.deps)).toBe(false); // a is aside, nothing else pending
    expect(await forwardBlob({ ...s.deps, now: () => T0 + BLOB_ASIDE_MS })).toBe(true);
    expect(sent(s.uploader)).toEqual(['hub:b', 'hub:a']);
  });

  it('offers a blob one upstream set aside to the next upstream', async () => {
    const slots: UpstreamSlot[] = [
      { upstream: upstream('hub-a'), plan: { windows: [] }, failures: 0, retryAt: 0 },
      { upstream: upstream('hub-b'), plan: { windows: [] }, failures: 0, retryAt: 0 },
    ];
    const s = setup(slots);
    s.custody.blobs.setAside('a'.repeat(64), 'hub-a', T0 + BLOB_ASIDE_MS, 'HTTP 413');
    s.custody.blobs.setAside('b'.repeat(64), 'hub-a', T0 + BLOB_ASIDE_MS, 'HTTP 413');
    expect(await forwardBlob(s.deps)).toBe(true);
    expect(sent(s.uploader)).toEqual(['hub-b:a']);
  });

  it('backs off rather than setting aside when the upstream refuses the relay itself (401, 403)', async () => {
    const s = setup([{ upstream: upstream('hub'), plan: { windows: [] }, failures: 0, retryAt: 0 }]);
    s.uploader.failWith = {
      ok: false,
      code: 'unauthorized',
      message: 'HTTP 401',
      retryable: false,
      status: 401,
    };
    expect(await forwardBlob(s.deps)).toBe(false);
    expect(s.deps.slots[0]?.retryAt).toBeGreaterThan(T0);
    expect(s.custody.blobs.pending('hub', 10, T0).map((b) => b.sha256[0])).toEqual(['a', 'b']);
  });

  it('holds blobs outside the contact window, as it holds bundles', async () => {
    const plan = { windows: windowsOf(['0 */2 * * * for 10m']) };
    const s = setup([{ upstream: upstream('hub'), plan, failures: 0, retryAt: 0 }]);
    expect(await forwardBlob(s.deps)).toBe(false);
    expect(await forwardBlob({ ...s.deps, now: () => T0 + 90 * 60_000 })).toBe(true);
  });

  it('sends waiting bundles first, then blobs, one round at a time', async () => {
    const hub = upstream('hub');
    const s = setup([{ upstream: hub, plan: { windows: [] }, failures: 0, retryAt: 0 }]);
    const d = describeBundle((await makeBundle({ created: T0 })).bytes);
    if (!d.ok) throw new Error(d.message);
    s.custody.accept('ship-7', [d.value], T0);
    expect(await forwardRound(s.deps)).toBe(0);
    expect([hub.batches.map((b) => b.ids.length), sent(s.uploader)]).toEqual([[1], []]);
    expect(await forwardRound(s.deps)).toBe(0);
    expect(await forwardRound(s.deps)).toBe(0);
    expect(sent(s.uploader)).toEqual(['hub:a', 'hub:b']);
    expect(await forwardRound(s.deps)).toBe(opts.idleMs);
  });

  it('lets a blob whose file is gone leave custody, counted and reported, and goes on with the next at once', async () => {
    const s = setup([{ upstream: upstream('hub'), plan: { windows: [] }, failures: 0, retryAt: 0 }]);
    s.uploader.failWith = { ok: false, code: BLOB_LOST, message: 'gone', retryable: false };
    expect(await forwardBlob(s.deps)).toBe(true);
    expect(s.events).toEqual([
      { type: 'blob-lost', upstream: 'hub', sha256: 'a'.repeat(64), reason: 'gone' },
    ]);
    expect(s.custody.counter('blobs_lost')).toBe(1);
    expect(s.deps.slots[0]?.retryAt).toBe(0); // the upstream is not to blame: no backoff
    s.uploader.failWith = null;
    expect(await forwardBlob(s.deps)).toBe(true);
    expect(sent(s.uploader)).toEqual(['hub:b']);
    // The agent uploads it again: custody takes it as new.
    s.custody.blobs.record('a'.repeat(64), 10, '/blobs/a', {}, 'ship-7', T0 + 2);
    expect(s.custody.blobs.pending('hub', 10).map((b) => b.sha256[0])).toEqual(['a']);
  });
});
