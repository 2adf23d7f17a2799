import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Logger } from 'pino';
import { ConvoBridgeError, describeError } from '../base/errors.js';
import { stopHttpServer } from '../base/stop-http-server.js';
import type { AdminSurface } from './admin-surface.js';

export interface AdminServer {
  /** e.g. `http://127.0.0.1:9090` (no path). */
  url: string;
  close(): Promise<void>;
}

/**
 * The admin surface on an address of its own (`admin.listen`), apart from the webhooks: its routes,
 * then JSON answers for any other path and for errors, all with the security headers.
 */
export async function listenAdmin(
  surface: AdminSurface,
  listen: { host: string; port: number },
  log: Logger,
): Promise<AdminServer> {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(surface.headers);
  app.use(surface.router);
  app.use((_req: Request, res: Response) => {
    res.status(404).json({ success: false, error: 'not found: the admin surface serves /admin/queues' });
  });
  app.use((error: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) {
      next(error);
      return;
    }
    const status = (error as { status?: unknown }).status;
    const code = typeof status === 'number' && status >= 400 && status < 500 ? status : 500;
    if (code === 500) log.error({ err: describeError(error) }, 'admin surface: a request failed');
    res.status(code).json({
      success: false,
      error: code === 500 ? 'the admin surface failed: the bridge log says why' : 'bad request',
    });
  });
  const server = createServer(app);
  // Bound slow senders: headers within 10 s, the whole request within 30 s (as the receiver).
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  const host = listen.host.includes(':') ? `[${listen.host}]` : listen.host;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      // The OS's code (EADDRINUSE...) stays the error's code: the CLI answers a port in use alike.
      const message = `admin.listen ${host}:${listen.port}: cannot listen (${error.message}): choose a free port, or an address of this machine`;
      reject(new ConvoBridgeError(message, { code: error.code ?? 'ADMIN_LISTEN_FAILED', cause: error }));
    });
    server.listen(listen.port, listen.host, () => {
      server.removeAllListeners('error');
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return { url: `http://${host}:${port}`, close: () => stopHttpServer(server) };
}
