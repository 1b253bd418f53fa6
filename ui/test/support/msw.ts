import { renderError } from '@driftline/protocol';
import { HttpResponse, http } from 'msw';
import type { MockHub } from './mockHub.js';

/** msw handlers answering `/api/…` from a `MockHub`; `/api/events` is a stream the test feeds with `hub.emit`. */
export function mswHandlers(hub: MockHub, opts: { lastEventIds?: (string | null)[] } = {}) {
  return [
    http.get('*/api/events', ({ request }) => {
      if (!hub.signedIn) {
        const refused = renderError('unauthorized', 'sign in first');
        return HttpResponse.json(refused.body, { status: refused.status });
      }
      opts.lastEventIds?.push(request.headers.get('last-event-id'));
      const enc = new TextEncoder();
      let off = () => {};
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(enc.encode(': hello\n\n'));
          off = hub.openStream(
            (frame) => controller.enqueue(enc.encode(frame)),
            () => controller.close(),
          );
          request.signal.addEventListener('abort', () => off());
        },
        cancel() {
          off();
        },
      });
      return new HttpResponse(stream, { headers: { 'content-type': 'text/event-stream' } });
    }),
    http.all('*/api/*', async ({ request }) => {
      const body = request.method === 'POST' ? await request.json().catch(() => null) : undefined;
      const answer = hub.handle(request.method, new URL(request.url), body, request.headers);
      if (answer.body === undefined) return new HttpResponse(null, { status: answer.status });
      return HttpResponse.json(answer.body as Record<string, unknown>, { status: answer.status });
    }),
  ];
}
