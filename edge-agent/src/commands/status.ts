import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { asLegacyBundle } from '@driftline/protocol';
import type { Command } from 'commander';
import { readWire2Links, type Wire2LinkState, wire2StatePath } from '../adapters/http/wire2State.js';
import { readPublicationEntries } from '../adapters/publications/SqlitePublicationLedger.js';
import { openSqliteLedger } from '../adapters/sqlite/openSqliteLedger.js';
import type { AgentConfig } from '../config.js';
import { readHubWindows } from '../core/sync/hubWindows.js';
import type { AgentRejection, StoreStatus } from '../ports/Ledger.js';
import { configOrExit } from './configOrExit.js';
import { contactStatus, renderContact } from './contactStatus.js';
import { readPublications, renderPublications } from './publicationStatus.js';

const ago = (t: number | null) =>
  t === null ? 'never' : `${new Date(t).toISOString()} (${Math.round((Date.now() - t) / 60_000)} min ago)`;
const mb = (n: number) => `${(n / 1024 / 1024).toFixed(2)} MiB`;
const at = (t: number) => (t <= Date.now() ? 'at the next push' : `at ${new Date(t).toISOString()}`);

/** One line per hub rejection: what the hub said, since when, and when the results go up again. */
const rejectionLine = (r: AgentRejection) =>
  `hub            ${r.state} (${r.code}) since ${ago(r.receivedAt)}: ${r.count} bundle(s) refused, results kept and sent again ${at(r.retryAt)}${FIX[r.code] ? `\n               fix: ${FIX[r.code]}` : ''}`;

/** What fixes a refusal, where a code says it (a relay's refusal travels as `forbidden`: decision 240). */
const FIX: Record<string, string> = {
  forbidden:
    "a relay on the way is refused for this site: its token does not act for it; at the hub run `hub peer sites RELAY --sites …` (the agent's log names the relay)",
};

/** Results of a round under way kept out of the document until its end (decision 370). */
const heldLine = (h: StoreStatus['held']) =>
  h.cells + h.runs === 0
    ? 'held back      nothing'
    : `held back      ${h.cells} cell(s), ${h.runs} new run(s) of a plan round under way, since ${ago(h.since)}; they go up with the round's last plan${h.dueBy === null ? '' : `, ${at(h.dueBy)} at the latest`}`;

/** Changed plans of a cron round waiting for it (decision 485): held until their deadline, not due. */
const heldNewsLine = (n: StoreStatus['heldNews']) =>
  n.count === 0
    ? []
    : [
        `held news      ${n.count} result(s), ${n.until !== null && n.until > Date.now() ? `held until ${new Date(n.until).toISOString()} (its round)` : 'due: they go with the next push'}`,
      ];

/** What carries a v2 link: h2c, or HTTP/1.1 and why (issue 46); nothing from an older state file. */
const carried = (l: Extract<Wire2LinkState, { wire: 2 }>) =>
  l.carrier === 'h2c'
    ? ' (h2c)'
    : l.carrier === 'http/1.1'
      ? ` (HTTP/1.1${l.reason ? `: ${l.reason}` : ''})`
      : '';

/** Each upstream's hop wire as its last registration answered (`sync.wire: 2`, decision 495). */
const wireLines = (links: Record<string, Wire2LinkState> | undefined) =>
  Object.entries(links ?? {}).map(([url, l]) =>
    l.wire === 2
      ? `hop            v2${carried(l)} with ${url} (node ${l.node}) since ${ago(l.since)}`
      : `hop            v1 with ${url}: ${l.reason}`,
  );

export function renderStatus(s: StoreStatus, links?: Record<string, Wire2LinkState>): string {
  const lines = [
    `agent          ${s.site}/${s.agent}`,
    `unacknowledged ${s.unackedRuns} run(s), oldest ${ago(s.oldestUnackedAt)}`,
    `bytes pending  ${mb(s.bytesPending)} (${s.blobsPending} blob(s) held, ${s.blobsAwaitingReceipt} of them uploaded and awaiting a hub receipt; ${s.blobReuploads} upload(s) again since start of the store)`,
    heldLine(s.held),
    ...heldNewsLine(s.heldNews),
    `last push      ${s.lastPush ? `${s.lastPush.ok ? 'ok' : 'FAILED'} ${ago(s.lastPush.at)} via ${s.lastPush.upstream ?? '-'}${s.lastPush.ok ? '' : `: ${s.lastPush.detail}`}` : 'never'}`,
    `last hub ack   ${ago(s.lastAckAt)}`,
    ...s.rejections.map(rejectionLine),
    `epoch          ${s.epoch}, document ${mb(s.docBytes)}`,
    `disk queue     ${mb(s.queueBytes)} of ${mb(s.maxQueueBytes)}${s.boundInForce ? ` — BOUND IN FORCE: ${s.dropped.blobs} detail blob(s) dropped (results kept)` : ''}`,
    'upstreams',
    ...s.upstreams.map(
      (u) =>
        `  ${u.url}  ${u.consecutiveFailures > 0 ? `DOWN (${u.consecutiveFailures} failures, last: ${u.lastError})` : 'ok'}  last ok ${ago(u.lastOkAt)}${u.stalls > 0 ? `\n    STALLED ${u.stalls} time(s), last ${ago(u.lastStallAt)}: its answers were cut (a downlink's: no progress for sync.stallS, or dripping; a push's: not begun in time); other upstreams go on` : ''}`,
    ),
    `stalls         ${s.upstreamStalls} answer(s) cut, downlink or push (driftline_agent_upstream_stalls_total)`,
    ...(s.custodyOverdue ?? []).map(
      (c) =>
        `custody        ${c.upstream} holds ${c.results} result(s) past their deadline, oldest ${ago(c.oldestAt)}; sent again by another upstream ${c.resends} time(s), passed over since ${ago(c.since)}`,
    ),
    ...wireLines(links),
  ];
  return `${lines.join('\n')}\n`;
}

/** `edge-agent status --config f.yaml [--json]`. */
export function registerStatus(program: Command): void {
  program
    .command('status')
    .description(
      'Show what is waiting to go upstream (and what is held back for its round, until when), the last push and ack, upstreams, epoch and disk use',
    )
    .requiredOption('--config <file>', 'agent configuration (YAML)')
    .option('--json', 'print the status as JSON')
    .addHelpText(
      'after',
      [
        '',
        "Safe to run while the daemon runs. A cron round's changed plans waiting for the round read",
        '`held news ... held until <time> (its round)` (in --json: heldNews { count, until }).',
        "With sync.wire: 2, each upstream's wire as it last answered: `hop  v2 (h2c) with <url> (node N) since ...`",
        '(v2 (HTTP/1.1: <why>) where h2c was refused on the way), or `hop  v1 with <url>: <why>`',
        '(in --json: wire { <url>: { wire, carrier, ... } }).',
        "An upstream that held this agent's results past its custody deadline without the hub's ack reads",
        '`custody  <upstream> holds N result(s) past their deadline, oldest ...`: the agent sent them by another',
        'upstream and passes that one over until it delivers or sync.resendAfterS passes (in --json: custodyOverdue).',
        '',
        'Example:',
        '  edge-agent status --config /etc/driftline/agent.yaml --json',
      ].join('\n'),
    )
    .action((o: { config: string; json?: boolean }) => {
      const config = configOrExit(o.config);
      if (!config) return;
      const path = join(config.dataDir, 'agent.sqlite');
      if (!existsSync(path)) {
        process.stderr.write(
          `edge-agent status: no store at ${path} yet (start the agent with \`edge-agent run\`)\n`,
        );
        process.exitCode = 1;
        return;
      }
      let read: AgentStatusRead;
      try {
        read = readAgentStatus(config);
      } catch (e) {
        process.stderr.write(`edge-agent status: ${(e as Error).message}\n`);
        process.exitCode = 1;
        return;
      }
      const { s, wire, publications, contact, now } = read;
      process.stdout.write(
        o.json
          ? `${JSON.stringify(statusJson(read), null, 2)}\n`
          : `${renderStatus(s, wire)}${renderContact(contact, now)}\n${renderPublications(publications, process.stdout.isTTY === true)}`,
      );
    });
}

/** What `edge-agent status` reads: the store's status, each v2 link, the publications and the contact plan. */
export interface AgentStatusRead {
  s: StoreStatus;
  wire: Record<string, Wire2LinkState> | undefined;
  publications: ReturnType<typeof readPublications>;
  contact: ReturnType<typeof contactStatus>;
  now: number;
}

/** Reads the agent's status from its store (which must exist) as `edge-agent status` does, at `now`. */
export function readAgentStatus(config: AgentConfig, now = Date.now()): AgentStatusRead {
  const opened = openSqliteLedger({
    path: join(config.dataDir, 'agent.sqlite'),
    site: config.site,
    agent: config.agent,
    maxQueueBytes: config.sync.maxQueueBytes,
    rejectedRetryMs: config.sync.rejectedRetryS * 1000,
    holdNewsMs: config.sync.newsHoldS * 1000, // a held plan's deadline reads capped by it, as in the daemon
  });
  try {
    const s = opened.ledger.status();
    const wire = config.sync.wire === 2 ? readWire2Links(wire2StatePath(config.dataDir)) : undefined;
    const publications = readPublications(readPublicationEntries(opened.db), config.dataDir);
    const contact = contactStatus(
      config.sync.contactWindows,
      config.sync.backoffCapS,
      now,
      readHubWindows(opened.ledger.storage),
    );
    return { s, wire, publications, contact, now };
  } finally {
    opened.ledger.close();
  }
}

/** `edge-agent status --json`; `bundles` repeats `publications` for scripts written before decision 170. */
export function statusJson(r: AgentStatusRead): Record<string, unknown> {
  const { s, wire, contact, publications } = r;
  return {
    ...s,
    ...(wire ? { wire } : {}),
    contact,
    publications,
    bundles: publications.map(asLegacyBundle),
  };
}
