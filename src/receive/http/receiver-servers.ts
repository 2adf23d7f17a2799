import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import type { Logger } from 'pino';
import { stopHttpServer } from '../../base/stop-http-server.js';
import { REPLIES } from '../webhook-reply.js';
import { answerClientError } from './answer-client-error.js';
import { JSON_TYPE } from './send-reply.js';

export interface ListeningReceiver {
  /** e.g. `http://127.0.0.1:39123` (no path). */
  url: string;
  port: number;
  /** Stops this server (the receiver's Redis stays open; `receiver.close()` closes all). */
  close(): Promise<void>;
}

export interface ReceiverServers {
  /** Serves the app on `host:port` (port 0 = a free one). */
  listen(port: number, host: string): Promise<ListeningReceiver>;
  /** Stops every server still listening. */
  closeAll(): Promise<void>;
}

/** The HTTP servers of one receiver's app: what Node would answer without JSON, answered in JSON. */
export function createReceiverServers(app: Express, log: Logger): ReceiverServers {
  const servers = new Set<Server>();
  return {
    listen(port, host) {
      const server = createAppServer(app, log);
      servers.add(server);
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          const address = server.address() as AddressInfo;
          const shownHost = host.includes(':') ? `[${host}]` : host;
          resolve({
            url: `http://${shownHost}:${address.port}`,
            port: address.port,
            close: async () => {
              servers.delete(server);
              await stopHttpServer(server);
            },
          });
        });
      });
    },
    async closeAll() {
      await Promise.all([...servers].map((server) => stopHttpServer(server)));
      servers.clear();
    },
  };
}

function createAppServer(app: Express, log: Logger): Server {
  // No Host header is required: the receiver does not use it, and Node's refusal of a request
  // without one is an empty 400, not JSON (test/hostile).
  const server = createServer({ requireHostHeader: false }, app);
  // Bound slow senders (slowloris): headers within 10 s, the whole request within 30 s.
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  // Requests the HTTP parser refuses get a JSON answer too (answer-client-error.ts).
  server.on('clientError', (error: Error & { code?: string }, socket) => {
    const reply = answerClientError(error, socket);
    if (log.isLevelEnabled('debug')) {
      log.debug(
        { code: error.code ?? null, status: reply?.status ?? null },
        'request refused by the HTTP parser',
      );
    }
  });
  // `Expect:` other than 100-continue: Node answers an empty 417 unless told otherwise.
  server.on('checkExpectation', (_req, res) => {
    const reply = REPLIES.expectationFailed;
    res.writeHead(reply.status, {
      'content-type': JSON_TYPE,
      'content-length': Buffer.byteLength(reply.body),
      'x-convo-bridge-outcome': reply.outcome,
      connection: 'close',
    });
    res.end(reply.body);
  });
  return server;
}
