import * as A from '@automerge/automerge';
import { packDocEntry } from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentSim } from './agentSim.js';
import { type Harness, makeHarness } from './harness.js';

/**
 * An enrolled agent (or whoever holds its key) writes keys no honest agent writes, with Automerge's
 * low-level calls, which take any key: `__proto__`, names every JS object answers to, entries under
 * another entry's key (docs/decisions/570-hostile-document-keys.md).
 */
const open: Harness[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.close();
});

/** Applies `write` to the agent's document through the backend, as a hostile agent would. */
function hostile(
  a: AgentSim,
  write: (h: ReturnType<typeof A.getBackend>, ids: Record<string, string>) => void,
) {
  const doc = A.clone(a.doc);
  const h = A.getBackend(doc);
  const id = (top: string) => (h.getWithType('_root', top) as [string, string])[1];
  write(h, { runs: id('runs'), cells: id('cells') });
  h.commit('hostile', Date.now());
  a.doc = A.load(h.save());
}

describe('hostile document keys', () => {
  for (const kind of ['sqlite', 'memory'] as const)
    it(`refuses cell and run keys no honest agent writes, counted and logged, and keeps the honest entries (${kind})`, async () => {
      const h = await makeHarness(kind);
      open.push(h);
      const a = await AgentSim.create('ship-7', 'a1', h.clock);
      await h.enrol(a);
      const runId = a.plan('prod', 'net', 'drift');
      const run = JSON.parse(String((a.doc.runs as Record<string, unknown>)[runId])) as Record<
        string,
        unknown
      >;
      const cell = JSON.parse(String((a.doc.cells as Record<string, unknown>)['prod/net'])) as Record<
        string,
        unknown
      >;
      const otherRun = '01JB00000000000000000000ZZ';
      hostile(a, (b, ids) => {
        const cells = ids.cells as string;
        const runs = ids.runs as string;
        // A map as prototype of whatever reads the cells: every lookup would find its fields.
        b.putObject(cells, '__proto__', { polluted: 'yes', status: 'clean' });
        b.put(cells, 'constructor', packDocEntry({ ...cell, component: 'constructor' } as never), 'str');
        b.put(cells, 'prod/toString', packDocEntry({ ...cell, component: 'toString' } as never), 'str');
        // A well-formed cell under another cell's key.
        b.put(cells, 'prod/dns', packDocEntry(cell as never), 'str');
        b.putObject(runs, '__proto__', { polluted: 'yes' });
        // A well-formed run under another run's id.
        b.put(runs, otherRun, packDocEntry(run as never), 'str');
      });
      const receipts = await h.ingest.accept('relay-1', [await a.delta()]);
      expect(receipts.map((r) => r.status)).toEqual(['stored']);

      const cells = await h.store.listCells();
      expect(cells.map((c) => `${c.site}/${c.environment}/${c.component}`)).toEqual(['ship-7/prod/net']);
      expect(cells[0]).toMatchObject({ runId, status: 'drift' });
      expect(await h.store.getRun(runId)).toMatchObject({ status: 'drift' });
      expect(await h.store.getRun(otherRun as never)).toBeNull();
      expect((cells[0] as unknown as Record<string, unknown>).polluted).toBeUndefined();

      const refusedKeys = h.warnings
        .filter((w) => w.msg.startsWith('refused document entries for their key'))
        .flatMap((w) => (w.obj as { refused: { key: string; problem: string }[] }).refused);
      expect(Object.fromEntries(refusedKeys.map((r) => [r.key, r.problem]))).toEqual({
        'cells.__proto__': 'a cell is keyed environment/component[@ref]',
        'cells.constructor': 'a cell is keyed environment/component[@ref]',
        'cells.prod/toString': expect.stringContaining('component "toString" is reserved'),
        'cells.prod/dns': 'keyed "prod/dns" but it is the cell "prod/net"',
        'runs.__proto__': 'a run is keyed by its run id (a ULID)',
        [`runs.${otherRun}`]: `keyed "${otherRun}" but its runId is "${runId}"`,
      });
      expect(h.entriesRefused.n).toBe(6);
    });

  it('reads a cadence change over a map holding a hostile key without taking it as the prototype', async () => {
    const h = await makeHarness('sqlite');
    open.push(h);
    const a = await AgentSim.create('ship-7', 'a1', h.clock);
    await h.enrol(a);
    a.plan('prod', 'net', 'clean', { cadenceS: 600 });
    a.plan('prod', 'dns', 'clean', { cadenceS: 600 });
    await h.ingest.accept('relay-1', [await a.delta()]);
    a.acked = A.getHeads(a.doc);
    hostile(a, (b, ids) => {
      b.putObject(ids.cells as string, '__proto__', { 'prod/net': 'x' });
    });
    // A cadence change reads every cell of the map at once (`DocReader.preload`).
    a.doc = A.change(a.doc, (d) => {
      (d.facts as { cadenceS: Record<string, number> }).cadenceS['prod/dns'] = 900;
    });
    await h.ingest.accept('relay-1', [await a.delta()]);
    const cells = await h.store.listCells();
    expect(cells.map((c) => [c.component, c.expectedIntervalS]).sort()).toEqual([
      ['dns', 900],
      ['net', 600],
    ]);
    expect(h.entriesRefused.n).toBe(1);
  });
});
