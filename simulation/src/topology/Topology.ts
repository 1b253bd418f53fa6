import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type LinkHandle, startLink } from '../link.js';
import { declareContactWindows, linkContactWindows } from './contactWindows.js';
import { freePort, waitForHttp } from './ports.js';
import { BINS, commandFor, FAKE_TERRAFORM_DIR } from './programs.js';
import { realToolEnv } from './realStacks.js';
import { type Layout, setUp, signInUrl } from './setup.js';
import type { TopologySpec } from './spec.js';

type NodeName = 'hub' | 'relay' | `agent:${string}`;

/** A running simulated deployment: hub, relay, agents as processes; links in this process. */
export class Topology {
  readonly links = new Map<string, LinkHandle>();
  readonly procs = new Map<NodeName, ChildProcess>();
  hubUrl = '';
  relayUrl = '';
  layout!: Layout;
  /** Token of the hub's admin user (`demo-admin`), made by `hub user add` during set-up. */
  adminToken = '';
  private ports = { hub: 0, relay: 0 };

  private constructor(readonly spec: TopologySpec) {}

  /** Writes configs, keys and credentials, starts the links and every node, waits until they answer. */
  static async start(spec: TopologySpec, log: (line: string) => void = () => {}): Promise<Topology> {
    const t = new Topology(spec);
    mkdirSync(spec.dir, { recursive: true });
    t.ports = { hub: spec.hubPort || (await freePort()), relay: spec.relayPort || (await freePort()) };
    t.hubUrl = `http://127.0.0.1:${t.ports.hub}`;
    t.relayUrl = `http://127.0.0.1:${t.ports.relay}`;
    const relayLink = await startLink({
      name: 'relay->hub',
      target: { port: t.ports.hub },
      profile: spec.relayLink.profile,
      timeScale: spec.relayLink.timeScale,
      controlPort: false,
      seed: spec.seed,
    });
    t.links.set('relay->hub', relayLink);
    const siteLinks: Record<string, number> = {};
    for (const s of spec.sites) siteLinks[s.site] = await freePort();
    log(`setting up keys, tokens and enrolment in ${spec.dir}`);
    const made = await setUp(spec, { ...t.ports, relayLink: relayLink.port, siteLinks });
    t.layout = made.layout;
    t.adminToken = made.adminToken;
    t.startNode('hub');
    await waitForHttp(`${t.hubUrl}/v1/health`, 60_000, () => t.alive('hub'));
    t.startNode('relay');
    await waitForHttp(`${t.relayUrl}/v1/health`, 60_000, () => t.alive('relay'));
    // Each site's link starts with its agent, so its schedule's first window (polar, Mars: open at 0)
    // is the one the agent's first results travel in, however long the set-up took.
    for (const s of spec.sites) {
      const link = await startLink({
        name: `${s.site}->relay`,
        listen: { port: siteLinks[s.site] },
        target: { port: t.ports.relay },
        profile: s.profile,
        timeScale: s.timeScale,
        ...(s.linkSettings ? { settings: s.linkSettings } : {}),
        controlPort: 0,
        seed: spec.seed,
      });
      t.links.set(s.site, link);
      // The site declares its link's windows (polar passes, Mars relay slots), so the hub judges its
      // silence by them: waiting between windows, overdue after a missed one.
      declareContactWindows(
        t.layout.agentConfig(s.site),
        linkContactWindows(link.control.settings(), Date.now() - link.stats().uptimeMs),
      );
      t.startNode(`agent:${s.site}`);
    }
    return t;
  }

  /** Opening this URL signs a browser in as the admin user (the hub redirects to the dashboard). */
  get signInUrl(): string {
    return signInUrl(this.hubUrl, this.adminToken);
  }

  /** Headers that authenticate a request to the hub's `/api` as the admin user. */
  get authHeaders(): Record<string, string> {
    return { authorization: `Bearer ${this.adminToken}` };
  }

  private alive(name: NodeName): boolean {
    const p = this.procs.get(name);
    return !!p && p.exitCode === null && p.signalCode === null;
  }

  /** Starts (or restarts) one node; its output goes to logs/<name>.log. */
  startNode(name: NodeName): ChildProcess {
    const out = createWriteStream(join(this.layout.logs, `${name.replace(':', '-')}.log`), { flags: 'a' });
    let bin: string;
    let args: string[];
    let cwd: string | undefined;
    // a demo or test killed outright leaves no program behind (docs/operations.md, supervisors)
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
      DRIFTLINE_EXIT_WITH_PARENT: '1',
    };
    if (name === 'hub') {
      bin = BINS.hub;
      args = ['run', '--config', this.layout.hubConfig];
    } else if (name === 'relay') {
      bin = BINS.relay;
      args = ['run', '--config', this.layout.relayConfig];
    } else {
      const site = name.slice('agent:'.length);
      bin = BINS.agent;
      args = ['run', '--config', this.layout.agentConfig(site)];
      cwd = this.layout.siteDir(site);
      if (this.spec.terraform === 'real') Object.assign(env, realToolEnv(this.layout.siteDir(site)));
      else env.PATH = `${FAKE_TERRAFORM_DIR}:${process.env.PATH ?? ''}`;
      if (this.spec.terraform !== 'real' && this.spec.sites.find((s) => s.site === site)?.toolState)
        env.FAKE_TERRAFORM_STATE_DIR = join(this.layout.siteDir(site), 'fake-terraform-state');
    }
    const c = commandFor(bin);
    const p = spawn(c.cmd, [...c.args, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    p.stdout?.pipe(out, { end: false });
    p.stderr?.pipe(out, { end: false });
    this.procs.set(name, p);
    return p;
  }

  /** Stops one node: SIGTERM (or SIGKILL), waits for it to exit. */
  async stopNode(name: NodeName, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const p = this.procs.get(name);
    if (!p || !this.alive(name)) return;
    const exited = new Promise<void>((r) => p.once('exit', () => r()));
    p.kill(signal);
    const hard = setTimeout(() => p.kill('SIGKILL'), 40_000);
    await exited;
    clearTimeout(hard);
  }

  get nodes(): NodeName[] {
    return [...this.procs.keys()];
  }

  /** Agents first (they flush), then relay, hub, and the links. */
  async stop(): Promise<void> {
    const order = [...this.nodes.filter((n) => n.startsWith('agent:')), 'relay', 'hub'] as NodeName[];
    for (const n of order) await this.stopNode(n);
    await Promise.all([...this.links.values()].map((l) => l.close()));
  }
}
