import { connect, type Socket } from 'node:net';

/** Sends raw bytes on a fresh connection and resolves with everything the server wrote back. */
export function rawRequest(baseUrl: string, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = openSocket(baseUrl);
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    socket.on('close', () => {
      resolve(answer);
    });
    socket.on('error', reject);
    socket.write(text);
  });
}

export function openSocket(baseUrl: string): Socket {
  const { hostname, port } = new URL(baseUrl);
  return connect(Number(port), hostname);
}

/** A connection writing `text` one byte per `everyMs`, never finishing; how it ended is recorded. */
export interface Trickle {
  /** Resolves with the time the server closed the connection, in ms since it opened. */
  readonly closedAfter: Promise<number>;
  /** Bytes the server sent back before closing. */
  readonly answer: () => string;
  stop(): void;
}

export function trickle(baseUrl: string, text: string, everyMs: number): Trickle {
  const socket = openSocket(baseUrl);
  const opened = Date.now();
  let answer = '';
  let sent = 0;
  const timer = setInterval(() => {
    if (sent < text.length && socket.writable) socket.write(text[sent++] ?? '');
  }, everyMs);
  socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  const closedAfter = new Promise<number>((resolve) => {
    socket.on('close', () => {
      clearInterval(timer);
      resolve(Date.now() - opened);
    });
  });
  return {
    closedAfter,
    answer: () => answer,
    stop: () => {
      clearInterval(timer);
      socket.destroy();
    },
  };
}

export function statusOf(answer: string): number | undefined {
  const match = /^HTTP\/1\.1 (\d{3})/.exec(answer);
  return match === null ? undefined : Number(match[1]);
}

export function bodyOf(answer: string): unknown {
  const start = answer.indexOf('\r\n\r\n');
  return JSON.parse(answer.slice(start + 4)) as unknown;
}
