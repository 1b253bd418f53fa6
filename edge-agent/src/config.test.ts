import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configWarnings, fileProblems, isWorkingDirProblem, loadConfig, parseConfig } from './config.js';

const GOOD = `
site: ship-7
agent: a1
dataDir: ./data
hubPublicKeyFile: ./hub.pub
upstreams:
  - url: http://127.0.0.1:7000
    tokenFile: ./relay.token
components:
  - name: network
    workingDir: ./infra/network
    environments: [prod, { name: staging, varFiles: [staging.tfvars], workspace: staging }]
    env: { TF_VAR_region: eu-west-1 }
    schedule: "*/30 * * * *"
redaction:
  patterns: [{ name: corp-token, regex: "CORP-[0-9]{8}" }]
  sensitiveAttributes: [admin_password]
`;

describe('config', () => {
  it('applies defaults and resolves paths against the file', () => {
    const r = parseConfig(GOOD, '/etc/driftline');
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const c = r.config.components[0]!;
    expect(c.workingDir).toBe('/etc/driftline/infra/network');
    expect(c.environments).toEqual([
      { name: 'prod' },
      { name: 'staging', varFiles: ['staging.tfvars'], workspace: 'staging' },
    ]);
    expect(c).toMatchObject({ tool: 'terraform', timeoutS: 1800, lockTimeoutS: 60, lockRetryThreshold: 3 });
    expect(r.config.limits.maxPlanBytes).toBe(128 * 1024 * 1024);
    expect(r.config.upstreams[0]?.tokenFile).toBe('/etc/driftline/relay.token');
  });

  it('refuses a component or environment named like a member of every JS object (decision 570)', () => {
    const r = parseConfig(
      GOOD.replace('name: network', 'name: constructor').replace('[prod,', '[toString,'),
      '/etc/d',
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems).toEqual(
      expect.arrayContaining([
        expect.stringContaining(
          '"constructor" is reserved (every JavaScript object answers to it): choose another name',
        ),
        expect.stringContaining('"toString" is reserved'),
      ]),
    );
  });

  it('plans on start by default, and warns that no publication kind is accepted until one is listed', () => {
    const r = parseConfig(GOOD, '/etc/driftline');
    if (!r.ok) throw new Error(r.problems.join('; '));
    expect(r.config.sync.planOnStart).toBe(true);
    expect(configWarnings(r.config)).toEqual([
      expect.stringMatching(/^publications\.accept: no kind is accepted/),
    ]);
    const off = parseConfig(
      `${GOOD}sync: { planOnStart: false }\npublications: { accept: { module: { dir: ./modules } } }\n`,
      '/etc/driftline',
    );
    if (!off.ok) throw new Error(off.problems.join('; '));
    expect(off.config.sync.planOnStart).toBe(false);
    expect(off.config.publications.accept.module?.dir).toBe('/etc/driftline/modules');
    expect(configWarnings(off.config)).toEqual([]);
  });

  it('reads contact windows in the syntax of hub and relay, and refuses any other text as they do (issue 58)', () => {
    const accept = 'publications: { accept: { module: { dir: ./modules } } }\n';
    const good = parseConfig(
      `${GOOD}${accept}sync: { contactWindows: ['0 2 * * * for 30m', 'every 90m for 8m from 2026-11-27T00:00:00Z'] }\n`,
      '/etc/driftline',
    );
    if (!good.ok) throw new Error(good.problems.join('; '));
    expect(configWarnings(good.config)).toEqual([]);
    for (const [i, text] of [
      [1, 'when the satellite is up'],
      [0, 'every 4m for 1m'],
      [0, 'every 4 minutes for 1m'],
    ] as const) {
      const windows = i === 1 ? `['0 2 * * * for 30m', '${text}']` : `['${text}']`;
      const bad = parseConfig(`${GOOD}${accept}sync: { contactWindows: ${windows} }\n`, '/etc/driftline');
      expect(bad.ok, text).toBe(false);
      if (bad.ok) continue;
      expect(bad.problems.join('\n'), text).toMatch(
        new RegExp(
          `^sync\\.contactWindows\\[${i}\\]: '${text}'.*write 'every 90m for 8m from 2026-11-27T00:00:00Z'`,
          'm',
        ),
      );
    }
  });

  it('reads bundles:, the name of publications: before decision 170, with a warning', () => {
    const old = parseConfig(`${GOOD}bundles: { accept: { module: { dir: ./modules } } }\n`, '/etc/driftline');
    if (!old.ok) throw new Error(old.problems.join('; '));
    expect(old.config.publications.accept.module?.dir).toBe('/etc/driftline/modules');
    expect(old.config.publications.quotaBytes).toBe(10 * 1024 ** 3);
    expect(configWarnings(old.config)).toEqual([
      expect.stringMatching(/^bundles: is deprecated .*publications:/),
    ]);
    const both = parseConfig(`${GOOD}bundles: {}\npublications: {}\n`, '/etc/driftline');
    expect(!both.ok && both.problems).toEqual([
      expect.stringMatching(/^bundles: is the old name of publications:/),
    ]);
  });

  it('names the key path of every problem', () => {
    const bad = GOOD.replace('site: ship-7', 'site: Ship 7')
      .replace('*/30 * * * *', 'every day')
      .replace('tool: terraform', '')
      .replace('CORP-[0-9]{8}', 'CORP-[')
      .replace('url: http://127.0.0.1:7000', 'url: ftp://x')
      .replace('    schedule:', '    timeoutS: -1\n    schedule:');
    const r = parseConfig(bad, '/x');
    expect(r.ok).toBe(false);
    const problems = r.ok ? [] : r.problems;
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^site: /),
        expect.stringMatching(/^upstreams\[0\]\.url: /),
        expect.stringMatching(
          /^components\[0\]\.schedule: cron 'every day' has 2 fields; write 5: minute hour/,
        ),
        expect.stringMatching(/^components\[0\]\.timeoutS: /),
        expect.stringMatching(/^redaction\.patterns\[0\]\.regex: is not a valid regular expression/),
      ]),
    );
  });

  it('refuses a custom pattern with a nested quantifier, which could backtrack for ever', () => {
    const r = parseConfig(GOOD.replace('CORP-[0-9]{8}', 'CORP-(?:[0-9]+)+$'), '/x');
    expect(r.ok ? [] : r.problems).toEqual([
      expect.stringMatching(
        /^redaction\.patterns\[0\]\.regex: has a quantified group that holds a quantifier/,
      ),
    ]);
  });

  it('refuses unknown keys, so a typo is not silently ignored', () => {
    const r = parseConfig(`${GOOD}\ncomponets: []\n`, '/x');
    expect(r.ok ? [] : r.problems).toEqual([expect.stringContaining('componets')]);
  });

  it('says when a referenced file or directory is missing, and when the YAML is broken', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cfg-'));
    writeFileSync(join(dir, 'agent.yaml'), GOOD);
    writeFileSync(join(dir, 'hub.pub'), 'ed25519:x');
    mkdirSync(join(dir, 'infra', 'network'), { recursive: true });
    const r = loadConfig(join(dir, 'agent.yaml'));
    expect(r.ok ? [] : r.problems).toEqual([
      expect.stringMatching(/^upstreams\[0\]\.tokenFile: token file ".*relay.token" does not exist$/),
    ]);
    // A missing working directory fails that component's runs alone, never the agent's start.
    writeFileSync(join(dir, 'relay.token'), 't');
    rmSync(join(dir, 'infra'), { recursive: true });
    const noDir = loadConfig(join(dir, 'agent.yaml'));
    expect(noDir.ok).toBe(true);
    expect(noDir.ok && fileProblems(noDir.config).filter(isWorkingDirProblem)).toEqual([
      expect.stringMatching(/^components\[0\]\.workingDir: working directory ".*network" does not exist$/),
    ]);
    writeFileSync(join(dir, 'broken.yaml'), 'site: [unclosed');
    expect(loadConfig(join(dir, 'broken.yaml'))).toMatchObject({
      ok: false,
      problems: [expect.stringMatching(/not valid YAML/)],
    });
    expect(loadConfig(join(dir, 'nope.yaml'))).toMatchObject({
      ok: false,
      problems: [expect.stringMatching(/cannot read .*ENOENT/)],
    });
  });
});
