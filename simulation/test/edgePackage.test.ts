/**
 * The end-to-end tests run the agent and the relay from the offline package the global set-up unpacked
 * (edgePackage.setup.ts); the hub stays on source.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { inputKey } from '../../scripts/package/unpacked.js';
import { BINS, commandFor, edgePackage, ROOT, runProgram } from '../src/topology/programs.js';

describe('programs started by the end-to-end tests', () => {
  const pkg = edgePackage();

  it.skipIf(!pkg)(
    "are the packaged launchers for the agent and the relay, and the hub's bin (compiled, decision 440)",
    async () => {
      expect(commandFor(BINS.agent)).toEqual({ cmd: join(pkg!, 'bin', 'edge-agent'), args: [] });
      expect(commandFor(BINS.relay)).toEqual({ cmd: join(pkg!, 'bin', 'relay'), args: [] });
      expect(commandFor(BINS.hub)).toEqual({ cmd: process.execPath, args: [BINS.hub] });
      expect(existsSync(join(pkg!, 'node', 'bin', 'node'))).toBe(true);
      expect(existsSync(join(pkg!, 'SHA256SUMS'))).toBe(true);
      const version = (await runProgram('agent', ['--version'])).trim();
      expect(version).toMatch(/^\d+\.\d+\.\d+/);
      expect((await runProgram('relay', ['--version'])).trim()).toBe(version);
    },
  );

  it('keys the cached package on its inputs, the same for the same checkout', () => {
    const k = inputKey(ROOT);
    expect(k).toMatch(/^[0-9a-f]{16}$/);
    expect(inputKey(ROOT)).toBe(k);
  });
});
