import { publicKeyFromText, publicKeyRaw, type Receipt, wire2 } from '@driftline/protocol';
import type { Peer, SourceClocks } from '../ports/HopBackend.js';
import type { Wire2Backend, Wire2Sender } from '../ports/Wire2Backend.js';
import { wire2KeyId } from '../wire2/push.js';
import { MemoryHopBackend } from './MemoryHopBackend.js';

/**
 * A memory node that speaks hop v2, for tests: a registration pins the key (dropping it from `senders`
 * revokes the sender), a v2 push is kept as it came (`pushes`) and answered stored; v1 as
 * {@link MemoryHopBackend}. Its answers' signatures are zeroes (no key of its own).
 */
export class MemoryWire2Node extends MemoryHopBackend {
  readonly senders = new Map<number, Wire2Sender>();
  readonly pushes: Uint8Array[] = [];
  readonly wire2: Wire2Backend = {
    nodeId: 3,
    register: async (peer, reg) => {
      const key = await publicKeyFromText(reg.publicKey);
      const from = wire2KeyId(await publicKeyRaw(key));
      this.senders.set(from, { peer, site: reg.site, agent: reg.agent, key });
      return from;
    },
    sender: async (from) => this.senders.get(from) ?? null,
    sign: () => new Uint8Array(64),
  };

  override async accept(
    peer: Peer,
    bundles: readonly Uint8Array[],
    clocks?: SourceClocks,
  ): Promise<Receipt[]> {
    const v1 = await super.accept(peer, bundles, clocks);
    return bundles.map((bytes, index) => {
      if (!wire2.isWire2Message(bytes)) return v1[index] as Receipt;
      this.pushes.push(bytes.slice());
      return { bundleId: null, index, status: 'stored', by: 'relay' };
    });
  }
}
