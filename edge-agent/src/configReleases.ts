import { z } from 'zod';

/**
 * `releases:` of `agent.yaml`: what the agent does with `agent-release` publications (offline packages of a
 * newer agent headquarters publishes with `hub release publish`). Nothing is taken unless `install`
 * is true, and nothing switches unless `switch` is.
 */
export const ReleasesSchema = z
  .strictObject({
    install: z
      .boolean()
      .default(false)
      .describe(
        'Take agent-release publications: verify each (hub signature, sha256, this CPU, newer than the running version, SHA256SUMS) and unpack it into <dir>/releases/<version>/; false refuses them and reports why.',
      ),
    dir: z
      .string()
      .min(1)
      .default('/opt/driftline-edge')
      .describe(
        'Install root, relative to this file: releases are unpacked into <dir>/releases/<version>/, and <dir>/current is the symlink the service runs from.',
      ),
    switch: z
      .boolean()
      .default(false)
      .describe(
        'After placing a release, repoint <dir>/current at it (atomic rename); the systemd path unit driftline-edge-agent-switch.path then restarts the agent. false: the operator switches.',
      ),
    maxBytes: z
      .number()
      .int()
      .positive()
      .default(512 * 1024 * 1024)
      .describe('Bound on the bytes of one release unpacked; a tarball that unpacks to more is refused.'),
    maxEntries: z
      .number()
      .int()
      .positive()
      .max(1_000_000)
      .default(10_000)
      .describe('Bound on the files and folders in one release; a tarball with more is refused.'),
  })
  .prefault({})
  .describe(
    'Updates of this agent delivered as agent-release publications: placed next to the running version, never run by themselves.',
  );

export type ReleasesConfig = z.infer<typeof ReleasesSchema>;
