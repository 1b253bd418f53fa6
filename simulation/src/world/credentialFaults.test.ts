import { describe, expect, it } from 'vitest';
import { CredentialFaults } from './credentialFaults.js';
import { REVOCATION_CHECK_MS, World } from './World.js';

const HOUR = 3_600_000;

/**
 * The `creds` fault (docs/decisions/540-deterministic-world.md, "Credentials"): a site's token stolen and
 * rotated as docs/operations.md says, a thief using the old one. Its invariant holds on the relay as it is,
 * and breaks on a relay whose revocation does not take.
 */
async function rotatedWorld(seed: number, revokeTakes: boolean) {
  let creds: CredentialFaults | null = null;
  const world = new World({
    seed,
    sites: 2,
    oneWayMs: 2000,
    contact: { periodMs: 2 * HOUR, upMs: HOUR },
    relayFront: (relay) => (creds ? creds.front(relay) : relay),
  });
  creds = new CredentialFaults(world, REVOCATION_CHECK_MS);
  try {
    await world.start();
    if (!revokeTakes) world.relay.tokens.revoke = () => 0;
    creds.schedule(
      seed,
      world.sites.map((s) => s.name),
      24 * HOUR,
    );
    await world.run(24 * HOUR);
    const end = Date.now();
    world.openAllLinks();
    const drained = await world.until(() => world.ledger.figures(end).lost === 0, 12 * HOUR);
    return { creds, drained, invariant: creds.invariants()[0] };
  } finally {
    await world.close();
  }
}

describe('a stolen token, rotated (the creds fault)', () => {
  it('refuses every use of the old token, and the site delivers everything with the new one', async () => {
    const { creds, drained, invariant } = await rotatedWorld(31, true);
    expect(creds.rotations.length).toBeGreaterThan(0);
    expect(creds.rotations.every((r) => r.carriedAt !== null)).toBe(true);
    expect(creds.thiefTries).toBeGreaterThan(0);
    // the thief's tries and the agent's own before its new token came, each refused
    expect(creds.refused).toBeGreaterThanOrEqual(creds.thiefTries);
    expect(creds.served).toEqual([]);
    expect(invariant?.held).toBe(true);
    expect(drained).toBe(true);
  });

  it('is broken by a relay whose revocation does not take: the thief is served the site downlink', async () => {
    const { creds, invariant } = await rotatedWorld(31, false);
    expect(invariant?.held).toBe(false);
    expect(creds.served.some((s) => s.startsWith('GET /v1/bundles answered'))).toBe(true);
  });
});
