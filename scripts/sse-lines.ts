/** One Server-Sent Event: its name (`message` when unnamed), its id, its data lines joined. */
export interface SseEvent {
  readonly event: string;
  readonly id: string | undefined;
  readonly data: string;
}

/**
 * The events of a `text/event-stream` body as the HTML standard parses them: lines end in LF,
 * CRLF or CR; a blank line dispatches; `:` lines are comments; one space after the colon is
 * dropped; an event without data is not dispatched.
 */
export async function* parseSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  let event = '';
  let id: string | undefined;
  let data: string[] = [];
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      for (let end = lineEnd(buffer, done); end !== -1; end = lineEnd(buffer, done)) {
        const line = buffer.slice(0, end);
        const crlf = buffer[end] === '\r' && buffer[end + 1] === '\n';
        buffer = buffer.slice(end + (crlf ? 2 : 1));
        if (line === '') {
          if (data.length > 0)
            yield { event: event === '' ? 'message' : event, id, data: data.join('\n') };
          event = '';
          data = [];
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        let value = colon === -1 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (field === 'event') event = value;
        else if (field === 'data') data.push(value);
        else if (field === 'id' && !value.includes('\0')) id = value;
      }
      if (done) return;
    }
  } finally {
    reader.releaseLock();
  }
}

/**
 * Where the first complete line of `buffer` ends, or -1. A CR at the very end waits for the next
 * chunk (it may be half of a CRLF) unless the body has ended.
 */
function lineEnd(buffer: string, ended: boolean): number {
  const lf = buffer.indexOf('\n');
  const cr = buffer.indexOf('\r');
  if (cr === -1 || (lf !== -1 && lf < cr)) return lf;
  if (cr === buffer.length - 1 && !ended) return -1;
  return cr;
}
