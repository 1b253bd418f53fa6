/**
 * Global set-up of the simulation tests: the offline package (`npm run package`) built and unpacked once
 * per run (cached across runs while its sources are unchanged: scripts/package/unpacked.ts), so the
 * end-to-end tests start the agent and the relay from what ships. Its folder goes to the test workers as
 * `DRIFTLINE_EDGE_PACKAGE` (read by simulation/src/topology/programs.ts) and its tarball as
 * `DRIFTLINE_EDGE_TARBALL`. A `DRIFTLINE_EDGE_PACKAGE` already set wins: a folder unpacked earlier, or
 * `source` to run them from source.
 */
import { unpackedPackage } from '../../scripts/package/unpacked.js';

export default async function setup(): Promise<void> {
  if (process.env.DRIFTLINE_EDGE_PACKAGE) return;
  const p = await unpackedPackage({ log: (m) => console.info(`[edge package] ${m}`) });
  process.env.DRIFTLINE_EDGE_PACKAGE = p.dir;
  process.env.DRIFTLINE_EDGE_TARBALL = p.tarball;
  console.info(
    `[edge package] agent and relay run from ${p.dir} (${p.built ? 'built' : 'cached'}, ${Math.round(p.ms / 1000)} s)`,
  );
}
