import { enrol } from '../src/core/enrolment.js';
import { AgentSim } from './agentSim.js';
import type { TestHub } from './hubFixture.js';
import { planRef, push, reportRefs, sha } from './refSim.js';
import { addTestUser } from './users.js';

export const AWS = 'registry.terraform.io/hashicorp/aws 5.31.0 linux_amd64';

/**
 * Two sites beside the fixture's: `ship-8` plans `prod/app` (refs main, pr/*) and `prod/db` (main only);
 * `ship-9` plans `prod/app` (main, pr/*). Both have planned main at commit `sha('1')`.
 */
export async function refSites(h: TestHub) {
  const agents: Record<'ship-8' | 'ship-9', AgentSim> = {
    'ship-8': await AgentSim.create('ship-8', 'b1', h.clock),
    'ship-9': await AgentSim.create('ship-9', 'c1', h.clock),
  };
  for (const a of Object.values(agents)) {
    const e = await enrol(
      h.hub.store,
      { site: a.site, agent: a.agent, key: await a.publicKeyText() },
      h.clock.now(),
    );
    if (!e.ok) throw new Error(e.error);
  }
  reportRefs(agents['ship-8'], {
    refs: { 'prod/app': ['main', 'pr/*'], 'prod/db': ['main'] },
    sources: { infra: { main: sha('1'), 'pr/42': sha('2') } },
    providers: [AWS.replace('5.31.0', '5.30.0')],
    platform: 'linux_amd64',
  });
  reportRefs(agents['ship-9'], {
    refs: { 'prod/app': ['main', 'pr/*'] },
    sources: { infra: { main: sha('1') } },
    platform: 'linux_arm64',
  });
  for (const a of Object.values(agents)) {
    planRef(a, {
      environment: 'prod',
      component: 'app',
      ref: 'main',
      commit: sha('1'),
      status: 'clean',
      defaultRef: true,
    });
    await push(h.hopUrl, h.relay, a);
  }
  const viewer = await addTestUser(h.hub.store, 'ci', ['viewer']);
  const operator = await addTestUser(h.hub.store, 'ops', ['operator']);
  const get = async (path: string, auth = viewer.authorization) => {
    const res = await fetch(`${h.url}${path}`, { headers: { authorization: auth } });
    return {
      status: res.status,
      body: (await res.json()) as Record<string, unknown> & { error?: { code: string; message: string } },
    };
  };
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${h.url}${path}`, {
      method: 'POST',
      headers: { authorization: operator.authorization, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return {
      status: res.status,
      body: (await res.json()) as Record<string, unknown> & { error?: { code: string; message: string } },
    };
  };
  /** Plans a ref at a site (the `@ref` cell unless `defaultRef`) and pushes it, a second later. */
  const plan = async (
    site: 'ship-8' | 'ship-9',
    o: Omit<Parameters<typeof planRef>[1], 'environment'> & { environment?: string },
  ) => {
    h.clock.advance(1_000);
    const runId = planRef(agents[site], { environment: 'prod', ...o });
    await push(h.hopUrl, h.relay, agents[site]);
    return runId;
  };
  return { agents, viewer, operator, get, post, plan };
}
