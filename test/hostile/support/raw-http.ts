import { connect } from 'node:net';

/**
 * A deliberately dumb HTTP/1.1 client over a plain TCP socket: it sends exactly the bytes it is
 * given (lying Content-Length, duplicate headers, invalid UTF-8, bare LF...), which fetch and
 * node:http refuse to produce, and reads back the first final answer.
 */

export interface RawAnswer {
  status: number;
  /** Header names lower-cased; repeated headers keep every value. */
  headers: Map<string, string[]>;
  body: Buffer;
  /** Informational answers (100 Continue) seen before the final one. */
  informational: number[];
}

export type RawResult =
  | { kind: 'answer'; answer: RawAnswer }
  /** The connection closed (or timed out) without a complete answer. */
  | { kind: 'no-answer'; reason: string; received: Buffer };

export interface SendOptions {
  /** Close our side after writing (a sender that says "that is all", e.g. after a short body). */
  halfClose: boolean;
  timeoutMs: number;
  /** The request was HEAD: the answer has headers only, whatever its Content-Length says. */
  head?: boolean;
}

export function sendRaw(port: number, request: Buffer, options: SendOptions): Promise<RawResult> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (reason: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const received = Buffer.concat(chunks);
      const answer = parseAnswer(received, options.head ?? false);
      resolve(answer ? { kind: 'answer', answer } : { kind: 'no-answer', reason, received });
    };
    const timer = setTimeout(() => finish(`no answer within ${options.timeoutMs} ms`), options.timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      // Stop as soon as a complete final answer is in (the server may keep the socket open).
      if (parseAnswer(Buffer.concat(chunks), options.head ?? false) !== undefined) finish('answered');
    });
    socket.on('end', () => finish('the server closed the connection'));
    socket.on('close', () => finish('the connection closed'));
    // A server that answers before reading the whole body may reset the connection while we are
    // still writing; what it answered before that is still read above.
    socket.on('error', (error) => finish(`socket error: ${error.message}`));
    socket.write(request, () => {
      if (options.halfClose) socket.end();
    });
  });
}

const CRLF_CRLF = Buffer.from('\r\n\r\n');

/** The first final (non-1xx) answer in `data`, or undefined while it is incomplete. */
export function parseAnswer(data: Buffer, head = false): RawAnswer | undefined {
  const informational: number[] = [];
  let offset = 0;
  for (let guard = 0; guard < 10; guard++) {
    const headEnd = data.indexOf(CRLF_CRLF, offset);
    if (headEnd === -1) return undefined;
    const lines = data.subarray(offset, headEnd).toString('latin1').split('\r\n');
    const match = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
    if (!match) return undefined;
    const status = Number(match[1]);
    const headers = new Map<string, string[]>();
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      const name = line.slice(0, colon).trim().toLowerCase();
      headers.set(name, [...(headers.get(name) ?? []), line.slice(colon + 1).trim()]);
    }
    const bodyStart = headEnd + CRLF_CRLF.length;
    if (status >= 100 && status < 200) {
      informational.push(status);
      offset = bodyStart;
      continue;
    }
    if (head) return { status, headers, body: Buffer.alloc(0), informational };
    const length = headers.get('content-length')?.[0];
    if (length !== undefined) {
      const end = bodyStart + Number(length);
      if (data.length < end) return undefined;
      return { status, headers, body: data.subarray(bodyStart, end), informational };
    }
    if (headers.get('transfer-encoding')?.some((v) => /chunked/i.test(v))) {
      const body = dechunk(data.subarray(bodyStart));
      return body === undefined ? undefined : { status, headers, body, informational };
    }
    // No framing: the body runs to the end of the connection; only complete once it closed.
    return undefined;
  }
  return undefined;
}

function dechunk(data: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const lineEnd = data.indexOf('\r\n', offset);
    if (lineEnd === -1) return undefined;
    const size = Number.parseInt(data.subarray(offset, lineEnd).toString('latin1'), 16);
    if (!Number.isFinite(size)) return undefined;
    if (size === 0) return Buffer.concat(parts);
    const start = lineEnd + 2;
    if (data.length < start + size + 2) return undefined;
    parts.push(data.subarray(start, start + size));
    offset = start + size + 2;
  }
}

/** One request, as bytes: request line, headers in the given order (duplicates kept), body. */
export function requestBytes(
  method: string,
  target: string,
  headers: readonly [string, string][],
  body: Buffer,
): Buffer {
  const head = [
    `${method} ${target} HTTP/1.1`,
    ...headers.map(([name, value]) => `${name}: ${value}`),
    '',
    '',
  ].join('\r\n');
  return Buffer.concat([Buffer.from(head, 'latin1'), body]);
}

/** A body in chunked transfer coding, cut into pieces of the given sizes. */
export function chunked(body: Buffer, pieceSize: number): Buffer {
  const parts: Buffer[] = [];
  for (let offset = 0; offset < body.length; offset += pieceSize) {
    const piece = body.subarray(offset, offset + pieceSize);
    parts.push(Buffer.from(`${piece.length.toString(16)}\r\n`, 'latin1'), piece, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(parts);
}
