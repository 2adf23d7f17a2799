import type { Server } from 'node:http';

/**
 * Stops an HTTP server: no new connections, idle keep-alive ones closed at once, and after
 * `graceMs` every connection still open cut, so that requests in flight get a moment to be answered
 * but a client's open keep-alive connection (a dashboard, a platform retrying) cannot hold the close.
 * Resolves at once for a server that is not listening; never rejects.
 */
export function stopHttpServer(server: Server, graceMs = 2_000): Promise<void> {
  return new Promise<void>((resolve) => {
    if (!server.listening) {
      resolve();
      return;
    }
    const force = setTimeout(() => server.closeAllConnections(), graceMs);
    force.unref();
    server.close(() => {
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
}
