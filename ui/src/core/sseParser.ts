/**
 * A parser for `text/event-stream` (WHATWG HTML §9.2.6), fed text chunks as they arrive. Pure, so the
 * fetch-based client can track `Last-Event-ID` itself and send it on every reconnect.
 */
export interface SseMessage {
  event: string;
  data: string;
  id: string | null;
}

export class SseParser {
  private buffer = '';
  private event = '';
  private data: string[] = [];
  /** The last `id:` seen, kept across messages as the spec requires. */
  lastEventId: string | null = null;
  /** A `retry:` the server asked for, in ms. */
  retryMs: number | null = null;

  /** Feeds a chunk; answers the messages it completed. */
  push(chunk: string): SseMessage[] {
    this.buffer += chunk;
    const out: SseMessage[] = [];
    const lines = this.buffer.split(/\r\n|\r|\n/);
    this.buffer = lines.pop() ?? '';
    for (const line of lines) {
      if (line === '') {
        if (this.data.length > 0) {
          out.push({ event: this.event || 'message', data: this.data.join('\n'), id: this.lastEventId });
        }
        this.event = '';
        this.data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') this.event = value;
      else if (field === 'data') this.data.push(value);
      else if (field === 'id' && !value.includes('\u0000')) {
        this.lastEventId = value;
      } else if (field === 'retry' && /^\d+$/.test(value)) this.retryMs = Number(value);
    }
    return out;
  }
}
