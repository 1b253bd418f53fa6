import type { HopServer } from '@driftline/hop';
import { listenAs } from '@driftline/hop/config';
import type { ApiServer } from '../adapters/http/apiServer.js';
import type { listenersOf } from '../config.js';

/**
 * Listens where the configuration says: one listener for both sides, or the hop API and the people's
 * side apart; resolves with the base URL of each side (equal when shared). A port in use names its key.
 */
export async function listenHub(
  listeners: ReturnType<typeof listenersOf>,
  hop: HopServer,
  api: ApiServer | null,
): Promise<{ hop: string; api: string }> {
  if ('shared' in listeners) {
    const { url } = await listenAs('listen.port', listeners.shared, () =>
      hop.listen(listeners.shared.port, listeners.shared.host),
    );
    return { hop: url, api: url };
  }
  const h = await listenAs('listen.hop.port', listeners.hop, () =>
    hop.listen(listeners.hop.port, listeners.hop.host),
  );
  const a = await listenAs('listen.api.port', listeners.api, () =>
    (api as ApiServer).listen(listeners.api.port, listeners.api.host),
  );
  return { hop: h.url, api: a.url };
}
