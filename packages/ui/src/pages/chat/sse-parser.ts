/**
 * An incremental parser of a `text/event-stream` body (the chat answer arrives on a POST, which
 * EventSource cannot send). Feed it decoded text chunks; it returns the complete frames so far.
 */

export interface SseFrame {
  event: string;
  id?: string;
  data: string;
}

export function createSseParser() {
  let buffer = '';
  return {
    push(chunk: string): SseFrame[] {
      buffer += chunk.replace(/\r\n?/g, '\n');
      const frames: SseFrame[] = [];
      for (;;) {
        const end = buffer.indexOf('\n\n');
        if (end < 0) break;
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let event = 'message';
        let id: string | undefined;
        const data: string[] = [];
        for (const line of block.split('\n')) {
          if (line === '' || line.startsWith(':')) continue;
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'event') event = value;
          else if (field === 'data') data.push(value);
          else if (field === 'id') id = value;
        }
        if (data.length) frames.push({ event, id, data: data.join('\n') });
      }
      return frames;
    },
  };
}
