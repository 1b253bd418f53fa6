/**
 * Each site's recent contact sessions, kept in memory for learning its contact windows
 * (docs/decisions/260-contact-plans.md): a contact within `silenceMs` of the session before extends it,
 * a later one starts a new session. Bounded per site and in sites; lost on restart (the plan is learned
 * again within a few windows), and per hub process.
 */
export class ContactHistory {
  private readonly sites = new Map<string, { start: number; end: number }[]>();
  /** Per site, how many times its sessions changed: what {@link contacts} gives moves only with it. */
  private readonly changes = new Map<string, number>();

  constructor(
    private readonly silenceMs: number,
    private readonly maxSessions = 256,
    private readonly maxSites = 100_000,
  ) {}

  /** Records a contact from `site` at `at` (hub time); older than the latest one known: ignored. */
  record(site: string, at: number): void {
    let s = this.sites.get(site);
    if (!s) {
      if (this.sites.size >= this.maxSites) return;
      s = [];
      this.sites.set(site, s);
    }
    const last = s[s.length - 1];
    if (last && at <= last.end) return;
    this.changes.set(site, (this.changes.get(site) ?? 0) + 1);
    if (last && at - last.end <= this.silenceMs) last.end = at;
    else {
      s.push({ start: at, end: at });
      if (s.length > this.maxSessions) s.splice(0, s.length - this.maxSessions);
    }
  }

  /** A number that changes whenever {@link contacts} of `site` would. */
  version(site: string): number {
    return this.changes.get(site) ?? 0;
  }

  /** The contacts that bound each session (its first and last), oldest first. */
  contacts(site: string): number[] {
    return (this.sites.get(site) ?? []).flatMap((x) => (x.end > x.start ? [x.start, x.end] : [x.start]));
  }
}
