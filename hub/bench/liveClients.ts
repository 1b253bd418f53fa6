import { request } from 'node:http';

/**
 * `n` dashboards on a hub's event stream (fleetScale): the delay from each batch's ack (`acked`) to its
 * `fleet-moved` at each client, one sample per client and batch.
 */
export function liveClients(url: string, authorization: string, n: number) {
  const acks: { sites: Set<string>; at: number; seen: number }[] = [];
  const delays: number[] = [];
  const clients = Array.from({ length: n }, () => {
    const req = request(url, { headers: { authorization } }, (res) => {
      let buf = '';
      res.on('data', (d: Buffer) => {
        // Split once per chunk (as a browser's EventSource reads): slicing the rest off per frame
        // copied the chunk once per event in the bench's process, which shares the cores with the hub.
        const frames = (buf + d.toString()).split('\n\n');
        buf = frames.pop() ?? '';
        for (const frame of frames) {
          if (!frame.includes('event: fleet-moved')) continue;
          const data = frame.split('\n').find((l) => l.startsWith('data: '));
          if (!data) continue;
          const e = JSON.parse(data.slice(6)) as { sites: string[] };
          const now = performance.now();
          for (const a of acks)
            if (e.sites.some((s) => a.sites.has(s)) && a.seen < n) {
              a.seen++;
              delays.push(now - a.at);
            }
        }
      });
    });
    req.end();
    return req;
  });
  return {
    delays,
    batches: () => acks.length,
    acked: (sites: string[], at: number) => void acks.push({ sites: new Set(sites), at, seen: 0 }),
    close: () => {
      for (const c of clients) c.destroy();
    },
  };
}
