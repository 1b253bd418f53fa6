/**
 * A newer agent delivered as an `agent-release` bundle, end to end as processes: `hub release publish`
 * at headquarters, through a relay, to an agent (the packaged one when the global set-up unpacked it)
 * whose config says `releases: { install: true, switch: true }`. The good release is placed next to the
 * running version and `current` is repointed; an older one, one for another CPU and one tampered with
 * after packing are refused, each with its reason reported to the hub. The releases are small stand-ins
 * packed as `npm run package` packs (its launcher, SHA256SUMS and deterministic tar), with a stub ELF
 * header in place of the 100 MB Node.
 */
import { spawn } from 'node:child_process';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type PublicationListItem, PublicationsResponseSchema } from '@driftline/protocol';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { deterministicTarGz, writeSums } from '../../scripts/package/tarball.js';
import { freePort, waitForHttp } from '../src/topology/ports.js';
import { BINS, FAKE_TERRAFORM_DIR, ROOT, runProgram } from '../src/topology/programs.js';
import { ProcessGroup, setUpHub, until } from './support.js';

const group = new ProcessGroup();
const dir = mkdtempSync(join(tmpdir(), 'driftline-agent-release-'));
afterAll(async () => {
  await group.stopAll();
  rmSync(dir, { recursive: true, force: true });
});

const ARCH = process.arch === 'arm64' ? 'arm64' : 'x64';
const OTHER = ARCH === 'x64' ? 'arm64' : 'x64';
const CPU = { x64: { unameM: 'x86_64', elf: 0x3e }, arm64: { unameM: 'aarch64', elf: 0xb7 } } as const;

/** A small release tarball as npm run package lays one out; `tamper` changes a file after SHA256SUMS. */
async function release(version: string, arch: 'x64' | 'arm64', tamper = false): Promise<string> {
  const stage = join(dir, `stage-${version}-${arch}`);
  for (const d of ['bin', 'lib', 'node/bin']) mkdirSync(join(stage, d), { recursive: true });
  const launcher = readFileSync(join(ROOT, 'packaging/launcher.sh'), 'utf8')
    .replaceAll('@ARCH@', CPU[arch].unameM)
    .replaceAll('@GLIBC_MIN@', '2.17');
  writeFileSync(join(stage, 'bin/edge-agent'), launcher);
  chmodSync(join(stage, 'bin/edge-agent'), 0o755);
  const elf = Buffer.alloc(64);
  elf.writeUInt32BE(0x7f454c46, 0);
  elf.writeUInt16LE(CPU[arch].elf, 18);
  writeFileSync(join(stage, 'node/bin/node'), elf);
  writeFileSync(join(stage, 'lib/edge-agent.mjs'), `console.log(${JSON.stringify(version)});\n`);
  writeFileSync(join(stage, 'VERSION'), `${version}\n`);
  writeSums(stage);
  if (tamper) writeFileSync(join(stage, 'lib/edge-agent.mjs'), 'console.log("changed after packing");\n');
  const out = join(dir, `driftline-edge-${version}-linux-${arch}.tar.gz`);
  await deterministicTarGz(stage, out, 1_700_000_000);
  return out;
}

/** Runs the hub CLI; resolves with its exit code and output (a refusal is an answer here, not an error). */
function hubCli(args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [BINS.hub, ...args], { env: { ...process.env, LOG_LEVEL: 'warn' } });
    let out = '';
    p.stdout.on('data', (d: Buffer) => {
      out += d;
    });
    p.stderr.on('data', (d: Buffer) => {
      out += d;
    });
    p.on('error', reject);
    p.on('close', (code) => resolve({ code, out }));
  });
}

describe('agent releases as publications', () => {
  it('places and switches to a newer release, and refuses an older one, another CPU’s and a tampered one, saying why', {
    timeout: 300_000,
  }, async () => {
    const [hubPort, relayPort] = [await freePort(), await freePort()];
    const hub = await setUpHub(dir, hubPort, { name: 'ship-lan', sites: ['ship-7'] });
    const relayConfig = join(dir, 'relay.yaml');
    writeFileSync(
      relayConfig,
      stringify({
        name: 'ship-lan',
        dataDir: join(dir, 'relay'),
        listen: { port: relayPort },
        sites: ['ship-7'],
        upstreams: [{ url: hub.url, token: hub.relayToken }],
        forward: { idleMs: 300, pullIntervalMs: 1000, backoffBaseMs: 300, backoffMaxMs: 1000 },
        publications: { intervalMs: 500 },
      }),
    );
    const agentToken = JSON.parse(
      await runProgram('relay', ['token', 'add', 'ship-7', '--config', relayConfig, '--json']),
    ).token as string;
    const site = join(dir, 'ship-7');
    const installRoot = join(site, 'opt');
    mkdirSync(join(site, 'infra', 'network'), { recursive: true });
    writeFileSync(join(site, 'token'), agentToken);
    writeFileSync(join(site, 'hub.pub'), hub.key);
    const agentConfig = join(site, 'agent.yaml');
    writeFileSync(
      agentConfig,
      stringify({
        site: 'ship-7',
        agent: 'a1',
        dataDir: './data',
        hubPublicKeyFile: './hub.pub',
        upstreams: [{ url: `http://127.0.0.1:${relayPort}`, tokenFile: './token' }],
        components: [
          { name: 'network', workingDir: './infra/network', environments: ['prod'], schedule: '0 0 1 1 *' },
        ],
        sync: { intervalS: 1, jitterS: 0 },
        publications: { retryMs: 500 },
        releases: { install: true, dir: './opt', switch: true },
      }),
    );
    const init = JSON.parse(await runProgram('agent', ['init', '--config', agentConfig, '--json']));
    await runProgram('hub', ['enroll', '--config', hub.config, init.enrollment]);
    const running = (await runProgram('agent', ['--version'])).trim();
    expect(running).toBe('0.1.0'); // the stand-in versions below are chosen around it

    const hubProc = group.start(BINS.hub, ['run', '--config', hub.config]);
    await waitForHttp(`${hub.url}/v1/health`, 60_000, () => hubProc.exitCode === null);
    const relay = group.start(BINS.relay, ['run', '--config', relayConfig]);
    await waitForHttp(`http://127.0.0.1:${relayPort}/v1/health`, 60_000, () => relay.exitCode === null);
    group.start(BINS.agent, ['run', '--config', agentConfig], {
      cwd: site,
      env: { PATH: `${FAKE_TERRAFORM_DIR}:${process.env.PATH}` },
    });

    const tokenFile = join(dir, 'admin.token');
    writeFileSync(tokenFile, hub.adminToken);
    const remote = ['--site', 'ship-7', '--hub', hub.url, '--token-file', tokenFile, '--json'];
    const publish = async (file: string) => {
      const r = await hubCli(['release', 'publish', file, ...remote]);
      expect(r.code, r.out).toBe(0);
      return (JSON.parse(r.out) as { publicationId: string }).publicationId;
    };
    const good = await publish(await release('0.2.0', ARCH));
    const older = await publish(await release('0.0.9', ARCH));
    const otherCpu = await publish(await release('0.3.0', OTHER));

    // Headquarters refuses to send a tarball whose files do not match its SHA256SUMS…
    const tamperedFile = await release('0.4.0', ARCH, true);
    const refusedAtHq = await hubCli(['release', 'publish', tamperedFile, ...remote]);
    expect(refusedAtHq.code).toBe(2);
    expect(refusedAtHq.out).toMatch(/do not match SHA256SUMS.*nothing was sent/s);
    // …and the agent refuses one that got past it (published as a plain publication of that kind).
    const name = `driftline-edge-0.4.0-linux-${ARCH}.tar.gz`;
    const plain = await hub.api(`/api/publications?site=ship-7&name=${name}&kind=agent-release`, {
      method: 'POST',
      body: readFileSync(tamperedFile),
    });
    expect(plain.status).toBe(201);
    const tampered = ((await plain.json()) as { publicationId: string }).publicationId;

    const deliveries = await until(
      'the agent’s word on all four releases at the hub',
      async () => {
        const list = PublicationsResponseSchema.parse(
          await (await hub.api('/api/publications?site=ship-7')).json(),
        );
        const at = (id: string) =>
          list.publications
            .find((p: PublicationListItem) => p.publicationId === id)
            ?.deliveries?.find((d) => d.site === 'ship-7');
        const all = [good, older, otherCpu, tampered].map(at);
        return all.every((d) => d && (d.state === 'placed' || d.state === 'refused')) ? all : undefined;
      },
      240_000,
      500,
    );
    const [g, o, c, t] = deliveries;
    expect(g).toMatchObject({ state: 'placed' });
    expect(o).toMatchObject({
      state: 'refused',
      reason: 'version 0.0.9 is not newer than the running 0.1.0',
    });
    expect(c).toMatchObject({
      state: 'refused',
      reason: `it is built for linux-${OTHER}, this machine is linux-${ARCH}`,
    });
    expect(t?.state).toBe('refused');
    expect(t?.reason).toMatch(/^release 0\.4\.0 refused: lib\/edge-agent\.mjs does not match SHA256SUMS/);

    expect(readFileSync(join(installRoot, 'releases', '0.2.0', 'VERSION'), 'utf8')).toBe('0.2.0\n');
    expect(readlinkSync(join(installRoot, 'current'))).toBe(join('releases', '0.2.0'));
    const shown = JSON.parse(await runProgram('agent', ['releases', '--config', agentConfig, '--json']));
    expect(shown).toMatchObject({ running: '0.1.0', placed: ['0.2.0'], current: '0.2.0', switch: true });
  });
});
