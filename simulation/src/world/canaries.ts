import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { infraContext } from '../core/terraform/infra.js';
import type { Invariant } from './invariant.js';
import type { World } from './World.js';

/** Where a canary was found, at most this many kept (the count goes on). */
const KEPT = 10;

/**
 * The secrets the world's fake terraform puts in its plans (`core/terraform/secrets.ts`: a database
 * password and its rotation, a GitHub token, an AWS key pair, a deploy key), one set per component and
 * environment of the seed, used as canaries (docs/decisions/540-deterministic-world.md, "Invariants at each
 * step"): none may reach the hub, at any commit, nor lie in the hub's or the relay's files at the end. The
 * agent strips them (allow-list first, then its scan); a canary anywhere upstream of it is a leak.
 */
export class Canaries {
  readonly values: readonly string[];
  /** Texts looked at (each hub commit, each file at the end). */
  checked = 0;
  readonly found: string[] = [];
  private count = 0;

  /** @param components the world's components per site (`stack-0`…); environments as the fake names them */
  constructor(components: number, seed = 1, environments: readonly string[] = ['prod', 'default']) {
    const values = new Set<string>();
    for (let c = 0; c < components; c++)
      for (const env of environments) {
        const s = infraContext(`stack-${c}`, env, seed, 0).secrets;
        // the key's body line: a PEM is as secret without its armour lines
        const pemBody = s.deployKeyPem.split('\n')[1] ?? s.deployKeyPem;
        for (const v of [
          s.dbPassword,
          s.rotatedDbPassword,
          s.apiToken,
          s.awsAccessKey,
          s.awsSecretKey,
          pemBody,
        ])
          values.add(v);
      }
    this.values = [...values];
  }

  /** Checks every commit of the hub as it is written (its runs' and cells' rows). */
  watch(world: World): void {
    world.hubCommits.add((c) => this.check('a hub commit', JSON.stringify([c.runs, c.cells])));
  }

  /** Looks for every canary in `text`; each one there is noted with `where`. */
  check(where: string, text: string): void {
    this.checked++;
    for (const v of this.values) {
      if (!text.includes(v)) continue;
      this.count++;
      if (this.found.length < KEPT) this.found.push(`${where} holds ${v.slice(0, 4)}… (${v.length} chars)`);
    }
  }

  /** Every file under `dir`, as bytes read as Latin-1 (a canary is ASCII), looked through. */
  scanFiles(where: string, dir: string): void {
    const walk = (d: string) => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        const p = join(d, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.isFile()) this.check(`${where} ${p.slice(dir.length + 1)}`, readFileSync(p, 'latin1'));
      }
    };
    walk(dir);
  }

  invariant(): Invariant {
    return {
      name: 'no canary upstream of the agents (checked at each hub commit and in the files at the end)',
      held: this.count === 0 && this.checked > 0,
      detail:
        this.count === 0
          ? `${this.values.length} canary secrets, none in ${this.checked} hub commits and files`
          : `${this.count} canaries found: ${this.found.join('; ')}`,
    };
  }
}
