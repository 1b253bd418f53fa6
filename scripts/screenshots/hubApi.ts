/** The few hub API reads the screenshots wait on (docs/operations.md), as the demo's admin user. */

export interface Cell {
  site: string;
  environment: string;
  component: string;
}

export interface Fleet {
  sites: { site: string; link: string; cells: number }[];
  attention: (Cell & { kind: string })[];
  totals: { cells: number; statusCounts: Record<string, number> };
}

export interface Run {
  runId: string;
  status: string;
  reason?: string | null;
  lock?: unknown;
}

export interface Relay {
  name: string;
  problems: { code: string }[];
}

export const cellPath = (c: Cell) => [c.site, c.environment, c.component].map(encodeURIComponent).join('/');

/** The dashboard's query for a cell's page. */
export const cellQuery = (c: Cell) =>
  `view=cell&site=${encodeURIComponent(c.site)}&env=${encodeURIComponent(c.environment)}&comp=${encodeURIComponent(c.component)}`;

export class HubApi {
  constructor(
    readonly hub: string,
    private readonly token: string,
  ) {}

  private async get<T>(path: string): Promise<T | null> {
    const r = await fetch(`${this.hub}${path}`, {
      headers: { authorization: `Bearer ${this.token}` },
    }).catch(() => null);
    return r?.ok ? ((await r.json()) as T) : null;
  }

  fleet(): Promise<Fleet | null> {
    return this.get<Fleet>('/api/fleet');
  }

  /** A cell's runs, newest first. */
  async runs(c: Cell): Promise<Run[]> {
    return (await this.get<{ runs: Run[] }>(`/api/cells/${cellPath(c)}/runs`))?.runs ?? [];
  }

  async relays(): Promise<Relay[]> {
    return (await this.get<{ relays: Relay[] }>('/api/relays'))?.relays ?? [];
  }
}
