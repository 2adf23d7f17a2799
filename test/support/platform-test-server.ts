import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the server saw it. */
export interface RecordedRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  query: Record<string, string>;
  headers: IncomingMessage['headers'];
  bodyText: string;
  /** The body decoded as JSON, or undefined. */
  json: unknown;
}

/** A scripted answer. */
export type Reply =
  | { status?: number; headers?: Record<string, string>; json: unknown; delayMs?: number }
  | { status?: number; headers?: Record<string, string>; text: string; delayMs?: number }
  /** Read the whole request body, then destroy the socket without answering. */
  | { destroy: true };

export interface PlatformTestServer {
  readonly url: string;
  readonly port: number;
  readonly requests: RecordedRequest[];
  /** Requests to one route, e.g. `POST /v1/message`. */
  requestsTo(route: string): RecordedRequest[];
  /** Queues answers for a route (`METHOD /path`), used once each, in order. */
  enqueue(route: string, ...replies: Reply[]): void;
  /** The answer for a route once its queue is empty (default: 404 JSON). */
  setDefault(route: string, reply: Reply | ((request: RecordedRequest) => Reply)): void;
  /** Forgets recorded requests, queued answers and defaults (call between tests). */
  reset(): void;
  close(): Promise<void>;
}

/**
 * A tiny scripted platform for the client's tests: real HTTP on 127.0.0.1, records every request
 * (method, path, query, headers, body) and answers what the test queued. Not the emulator: it
 * knows nothing of the interface, so the tests say exactly what the platform answers.
 */
export async function startPlatformTestServer(options: { port?: number } = {}): Promise<PlatformTestServer> {
  const requests: RecordedRequest[] = [];
  const queues = new Map<string, Reply[]>();
  const defaults = new Map<string, Reply | ((request: RecordedRequest) => Reply)>();
  const timers = new Set<NodeJS.Timeout>();

  const answer = (res: ServerResponse, reply: Reply) => {
    if ('destroy' in reply) {
      res.socket?.destroy();
      return;
    }
    const send = () => {
      if (res.destroyed) return;
      const isJson = 'json' in reply;
      const body = isJson ? JSON.stringify(reply.json) : reply.text;
      res.writeHead(reply.status ?? 200, {
        'content-type': isJson ? 'application/json' : 'text/plain; charset=utf-8',
        ...reply.headers,
      });
      res.end(body);
    };
    if (reply.delayMs === undefined) {
      send();
      return;
    }
    const timer = setTimeout(() => {
      timers.delete(timer);
      send();
    }, reply.delayMs);
    timers.add(timer);
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const bodyText = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      try {
        json = bodyText === '' ? undefined : JSON.parse(bodyText);
      } catch {
        json = undefined;
      }
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
        bodyText,
        json,
      };
      requests.push(recorded);
      const route = `${recorded.method} ${recorded.path}`;
      try {
        const queued = queues.get(route)?.shift();
        const fallback = defaults.get(route);
        const reply: Reply = queued ??
          (typeof fallback === 'function' ? fallback(recorded) : fallback) ?? {
            status: 404,
            json: { status: 0, rc: 404, error_msg: `test server: nothing scripted for ${route}` },
          };
        answer(res, reply);
      } catch (error) {
        // A broken script answers at once instead of leaving the client to time out.
        res.writeHead(599, { 'content-type': 'text/plain' });
        res.end(`test server: bad scripted reply for ${route}: ${String(error)}`);
      }
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    requestsTo: (route) => requests.filter((r) => `${r.method} ${r.path}` === route),
    enqueue(route, ...replies) {
      queues.set(route, [...(queues.get(route) ?? []), ...replies]);
    },
    setDefault(route, reply) {
      defaults.set(route, reply);
    },
    reset() {
      requests.length = 0;
      queues.clear();
      defaults.clear();
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
