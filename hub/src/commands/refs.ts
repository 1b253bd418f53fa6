import {
  CommitSchema,
  MatrixResponseSchema,
  parseCliDuration,
  type RefStatusResponse,
  RefStatusResponseSchema,
  RefsResponseSchema,
  refNameProblem,
} from '@driftline/protocol';
import type { Command } from 'commander';
import { readRefMatrix } from './refsMatrix.js';
import { buildReport, reportMarkdown } from './refsReport.js';
import { RemoteError, type RemoteHub, remoteAction, remoteHub, remoteOptions } from './remote.js';

/** Exit codes of `hub refs wait`: a CI gate. */
export const WAIT_EXIT = { complete: 0, failed: 1, blocked: 1, pending: 2 } as const;

const usage = (verb: string, msg: string): never => {
  throw new RemoteError(`${msg} (see hub refs ${verb} --help)`, null);
};

function checkRef(verb: string, ref: string): string {
  const p = refNameProblem(ref);
  return p ? usage(verb, `--ref ${ref}: ${p}`) : ref;
}

function checkCommit(verb: string, commit: string): string {
  return CommitSchema.safeParse(commit).success
    ? commit
    : usage(verb, `--commit ${commit}: give the full commit id (git rev-parse HEAD), 40 or 64 hex digits`);
}

const statusPath = (ref: string, commit: string) =>
  `/api/refs/${encodeURIComponent(ref)}/status?commit=${commit}`;

/** Whether a failed poll may be tried again before the timeout (the network, a busy or restarting hub). */
const transient = (e: unknown) =>
  e instanceof RemoteError && (e.status === null || e.status === 429 || e.status >= 500);

function progress(s: RefStatusResponse, leftMs: number): string {
  const c = s.counts;
  const coming = s.cells.filter((x) => x.onTheWay?.length).length;
  const waiting = coming ? ` (${coming} waiting for a publication on its way)` : '';
  return `${s.state}: ${c.complete}/${c.total} complete, ${c.pending} pending${waiting}, ${c.blocked} blocked, ${c.failed} failed (${Math.ceil(leftMs / 1000)} s left)`;
}

/** Polls the gate until it is decided or `timeoutMs` passes; returns the exit code. */
async function waitFor(
  hub: RemoteHub,
  o: { ref: string; commit: string; timeoutMs: number; intervalMs: number; json: boolean },
): Promise<number> {
  const deadline = Date.now() + o.timeoutMs;
  let last: RefStatusResponse | null = null;
  let lastLine = '';
  // Bounded: every pass waits at least a second, and the loop ends at the deadline.
  for (let pass = 0; pass < 1 + o.timeoutMs / 1000; pass++) {
    try {
      last = await hub.json('GET', statusPath(o.ref, o.commit), RefStatusResponseSchema);
      const line = progress(last, deadline - Date.now());
      if (line.replace(/\(.*\)$/, '') !== lastLine.replace(/\(.*\)$/, '')) console.error(line);
      lastLine = line;
      if (last.state !== 'pending') break;
    } catch (e) {
      if (!transient(e)) throw e;
      console.error(`hub refs wait: ${(e as Error).message}; trying again`);
    }
    const left = deadline - Date.now();
    if (left <= 0) break;
    await new Promise((r) => setTimeout(r, Math.max(1000, Math.min(o.intervalMs, left))));
  }
  if (o.json) console.log(JSON.stringify(last ?? { ref: o.ref, commit: o.commit, state: 'pending' }));
  if (!last) {
    console.error(`hub refs wait: no answer from ${hub.url} before the timeout`);
    return WAIT_EXIT.pending;
  }
  const done = last.state === 'pending' ? 'still pending at the timeout' : last.state;
  if (!o.json) {
    console.log(`ref ${o.ref} at ${o.commit.slice(0, 12)}: ${done}`);
    for (const c of last.cells.filter((x) => x.state !== 'complete'))
      console.log(
        `  ${c.state}\t${c.site} ${c.environment}/${c.component}${c.needs.length ? `\tneeds ${c.needs.join(', ')}` : ''}${c.onTheWay?.length ? `\ton its way: publication ${c.onTheWay.join(', ')}` : ''}${c.reason ? `\t${c.reason}` : ''}`,
      );
  }
  return WAIT_EXIT[last.state];
}

/** `hub refs wait|report|list`: plans of refs (PRs, branches) from a CI job, over the hub's API. */
export function addRefsVerbs(program: Command): void {
  const refs = program
    .command('refs')
    .description('plans of refs (pr/42, branches): wait for a commit to be planned everywhere, report, list')
    .addHelpText(
      'after',
      '\nExample:\n  hub refs wait --ref pr/42 --commit "$(git rev-parse HEAD)" --timeout 2h',
    );
  const verb = (name: string, description: string, example: string) =>
    remoteOptions(refs.command(name).description(description))
      .option('--json', 'machine-readable output')
      .addHelpText('after', `\nExample:\n  ${example}`)
      .exitOverride();

  verb(
    'wait',
    'wait until every cell the ref touches has a plan of the commit: exit 0 complete, 1 failed or blocked, 2 still pending at the timeout or an error',
    'hub refs wait --ref pr/42 --commit "$(git rev-parse HEAD)" --timeout 2h --hub https://hub.example --token-file ci.token',
  )
    .requiredOption('--ref <ref>', 'the ref (pr/42, a branch)')
    .requiredOption('--commit <sha>', 'the full commit id whose plans to wait for')
    .option('--timeout <duration>', 'give up after this long: 2h, 30m, 90s or seconds', '1h')
    .option('--interval <duration>', 'ask the hub this often (at least 1s)', '10s')
    .action((o) =>
      remoteAction('refs wait', async () => {
        const ref = checkRef('wait', o.ref);
        const commit = checkCommit('wait', o.commit);
        const timeoutMs =
          parseCliDuration(o.timeout) ??
          usage('wait', `--timeout ${o.timeout}: write 2h, 30m, 90s or seconds`);
        const intervalMs =
          parseCliDuration(o.interval) ?? usage('wait', `--interval ${o.interval}: write 30s, 1m or seconds`);
        return waitFor(remoteHub(o), { ref, commit, timeoutMs, intervalMs, json: !!o.json });
      }),
    );

  verb(
    'report',
    "print a PR comment of the ref's plans: changes with counts, drift kept apart, blocked with needs, failed with reason, ages, dashboard links",
    'hub refs report --ref pr/42 --commit "$(git rev-parse HEAD)" --format markdown > comment.md',
  )
    .requiredOption('--ref <ref>', 'the ref (pr/42, a branch)')
    .option('--commit <sha>', "report the plans of this commit (default: each cell's latest plan of the ref)")
    .option('--format <format>', 'markdown or json', 'markdown')
    .action((o) =>
      remoteAction('refs report', async () => {
        const ref = checkRef('report', o.ref);
        const commit = o.commit === undefined ? null : checkCommit('report', o.commit);
        const format = o.json ? 'json' : o.format;
        if (format !== 'markdown' && format !== 'json')
          usage('report', `--format ${format}: markdown or json`);
        const hub = remoteHub(o);
        // Every page of the ref's matrix, not only the first (decision 640).
        const matrix = await readRefMatrix((path) => hub.json('GET', path, MatrixResponseSchema), ref);
        let gate: RefStatusResponse | null = null;
        if (commit) {
          try {
            gate = await hub.json('GET', statusPath(ref, commit), RefStatusResponseSchema);
          } catch (e) {
            if (!(e instanceof RemoteError && e.status === 404)) throw e;
          }
        }
        const report = buildReport(hub.url, ref, commit, matrix, gate);
        process.stdout.write(
          format === 'json' ? `${JSON.stringify(report, null, 2)}\n` : reportMarkdown(report),
        );
        return 0;
      }),
    );

  verb(
    'list',
    'list the refs the hub holds plans of, newest plan first',
    'hub refs list --hub https://hub.example --token-file ci.token',
  )
    .option('--limit <n>', 'at most this many refs (1-1000)', '100')
    .action((o) =>
      remoteAction('refs list', async () => {
        const limit = Number(o.limit);
        if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
          usage('list', `--limit ${o.limit}: 1 to 1000`);
        const r = await remoteHub(o).json('GET', `/api/refs?limit=${limit}`, RefsResponseSchema);
        if (o.json) console.log(JSON.stringify(r));
        else if (r.refs.length === 0) console.log('(no plans of any ref yet)');
        else
          for (const x of r.refs)
            console.log(`${x.ref}\t${x.cells} cell(s)\tlast planned ${x.lastPlannedAt ?? '—'}`);
        return 0;
      }),
    );
}
