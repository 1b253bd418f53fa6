import { readFileSync } from 'node:fs';

/** A result an agent recorded (from its log): run id and when it was recorded, site clock. */
export interface Produced {
  runId: string;
  site: string;
  environment: string;
  component: string;
  at: number;
}

/** Runs recorded as new results, read from an agent's JSON log lines. */
export function producedFromLog(path: string): Produced[] {
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  const out: Produced[] = [];
  for (const line of text.split('\n')) {
    if (!line.includes('"result recorded"')) continue;
    try {
      const r = JSON.parse(line) as {
        runId?: string;
        site: string;
        environment: string;
        component: string;
        time: number;
        unchanged?: boolean;
      };
      if (r.runId && r.unchanged === false)
        out.push({
          runId: r.runId,
          site: r.site,
          environment: r.environment,
          component: r.component,
          at: r.time,
        });
    } catch {
      // a line cut by SIGKILL: it was logged after its commit, so nothing is lost by skipping it
    }
  }
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The hub refused the credential: unlike a hub that is down for a moment, waiting will not help. */
export class HubRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HubRefused';
  }
}

/**
 * GET from the hub's `/api` with the admin token; waits out a 429 as its `Retry-After` says (the hub
 * rate-limits per credential), a few times, rather than reading a refusal as "nothing there".
 */
async function getApi(url: string, token: string): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    const r = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    if (r.status !== 429 || attempt >= 5) return r;
    await r.body?.cancel();
    await sleep(Math.min(60, Number(r.headers.get('retry-after')) || 1) * 1000);
  }
}

/** Every run the hub holds for the given cells: run id → receivedAt (ms), with repeats counted. */
export async function deliveredAtHub(
  hubUrl: string,
  cells: Array<{ site: string; environment: string; component: string }>,
  token: string,
): Promise<{ received: Map<string, number>; repeats: number }> {
  const received = new Map<string, number>();
  let repeats = 0;
  for (const c of cells) {
    let before: string | null = null;
    for (let page = 0; page < 1000; page++) {
      const q = new URLSearchParams({ limit: '500', ...(before ? { before } : {}) });
      const r = await getApi(
        `${hubUrl}/api/cells/${c.site}/${c.environment}/${c.component}/runs?${q}`,
        token,
      );
      // A refused credential would read as "everything lost": say so instead.
      if (r.status === 401 || r.status === 403)
        throw new HubRefused(`the hub refused the admin token (${r.status}): ${await r.text()}`);
      if (!r.ok) break;
      const body = (await r.json()) as {
        runs: Array<{ runId: string; receivedAt: string }>;
        nextBefore: string | null;
      };
      for (const run of body.runs) {
        if (received.has(run.runId)) repeats++;
        received.set(run.runId, Date.parse(run.receivedAt));
      }
      if (!body.nextBefore) break;
      before = body.nextBefore;
    }
  }
  return { received, repeats };
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}
