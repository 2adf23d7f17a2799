import type { Express } from 'express';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { describeError } from '../../base/errors.js';
import { JSON_TYPE } from './send-reply.js';

export interface HealthRoutesDeps {
  /** A real write to Redis (EventProducer.probe). */
  probe: () => Promise<void>;
  /** Where Redis is, in words (EventProducer.address), so that a failed probe names what was tried. */
  redisAddress: string;
  /** The caller's extra readiness condition (ReceiverOptions.readiness). */
  readiness: (() => string | null | Promise<string | null>) | undefined;
  /** More for the body of `/readyz` (ReceiverOptions.readinessDetails). */
  readinessDetails: (() => Record<string, unknown>) | undefined;
  /** Served at `GET /metrics` when given. */
  metrics: Registry | undefined;
  log: Logger;
}

/** `GET /healthz` (the process answers), `GET /readyz` (Redis takes writes, and the caller's condition), `GET /metrics`. */
export function mountHealthRoutes(app: Express, deps: HealthRoutesDeps): void {
  const { probe, redisAddress, readiness, readinessDetails, metrics, log } = deps;
  app.get('/healthz', (_req, res) => {
    res.status(200).set('content-type', JSON_TYPE).send('{"status":"ok"}');
  });
  app.get('/readyz', async (_req, res) => {
    try {
      await probe();
      const notReady = readiness ? await readiness() : null;
      const details = readinessDetails?.();
      if (notReady !== null) {
        res
          .status(503)
          .set('content-type', JSON_TYPE)
          .send(JSON.stringify({ status: 'unavailable', error: notReady, ...details }));
        return;
      }
      res
        .status(200)
        .set('content-type', JSON_TYPE)
        .send(details === undefined ? '{"status":"ready"}' : JSON.stringify({ status: 'ready', ...details }));
    } catch (error) {
      log.warn({ err: describeError(error) }, `not ready: Redis at ${redisAddress} does not accept writes`);
      res
        .status(503)
        .set('content-type', JSON_TYPE)
        .send(
          JSON.stringify({
            status: 'unavailable',
            error: `Redis at ${redisAddress} does not accept writes; check that it is running`,
          }),
        );
    }
  });
  if (metrics) {
    app.get('/metrics', async (_req, res) => {
      res
        .status(200)
        .set('content-type', metrics.contentType)
        .send(await metrics.metrics());
    });
  }
}
