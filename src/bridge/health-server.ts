import { createServer, type Server } from 'node:http';
import express from 'express';
import type { Registry } from 'prom-client';

/** `work --port`: /healthz, /readyz and /metrics of a worker that runs no receiver. */
export async function startHealthServer(
  port: number,
  host: string,
  registry: Registry,
  readiness: () => Promise<string | null>,
  readinessDetails?: () => Record<string, unknown>,
): Promise<Server> {
  const app = express();
  app.disable('x-powered-by');
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const reason = await readiness();
    const details = readinessDetails?.();
    if (reason) res.status(503).json({ status: 'unavailable', error: reason, ...details });
    else res.json({ status: 'ready', ...details });
  });
  app.get('/metrics', async (_req, res) => {
    res.set('content-type', registry.contentType).send(await registry.metrics());
  });
  app.use((_req, res) => {
    res
      .status(404)
      .json({ success: false, error: 'not found: /healthz, /readyz and /metrics are served here' });
  });
  const server = createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
