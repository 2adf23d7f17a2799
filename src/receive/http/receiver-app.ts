import express, { type Express } from 'express';
import { Registry } from 'prom-client';
import type { BridgeTracing } from '../../observe/trace-context.js';
import type { ReceiveEffects } from '../receive-webhook.js';
import { createReceiverMetrics } from '../receiver-metrics.js';
import type { ResolvedReceiverOptions } from '../receiver-options.js';
import { createSecretVerifier } from '../verify-secret.js';
import { createWebhookAnswerer, type RequestStates } from './answer-webhook.js';
import { type HealthRoutesDeps, mountHealthRoutes } from './health-routes.js';
import { createBodyReader } from './read-webhook-body.js';
import { createErrorHandler, createNotFoundHandler } from './unhandled-request.js';
import { createWebhookRoute } from './webhook-route.js';

export interface ReceiverAppDeps extends HealthRoutesDeps {
  settings: Pick<ResolvedReceiverOptions, 'path' | 'secrets' | 'bodyLimitBytes'>;
  /** What the webhook policy stores with (receive-webhook.ts). */
  effects: ReceiveEffects;
  tracing: BridgeTracing | undefined;
  /** More routes, mounted before the JSON 404 handler. */
  routes: ((app: Express) => void) | undefined;
}

/**
 * The receiver's Express app: health routes, the webhook route, the caller's routes, then JSON
 * answers for everything else (404) and for every error. Answers are JSON only, never an HTML page
 * or a stack trace.
 */
export function createReceiverApp(deps: ReceiverAppDeps): Express {
  const { settings, log } = deps;
  const states: RequestStates = new WeakMap();
  const answer = createWebhookAnswerer({
    states,
    metrics: createReceiverMetrics(deps.metrics ?? new Registry()),
    log,
  });
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  mountHealthRoutes(app, deps);
  app.all(
    settings.path,
    createWebhookRoute({
      path: settings.path,
      bodyLimitBytes: settings.bodyLimitBytes,
      verify: createSecretVerifier(settings.secrets),
      effects: deps.effects,
      tracing: deps.tracing,
      readBody: createBodyReader(settings.bodyLimitBytes),
      states,
      answer,
    }),
  );
  deps.routes?.(app);
  app.use(createNotFoundHandler(settings.path));
  app.use(createErrorHandler({ bodyLimitBytes: settings.bodyLimitBytes, states, answer, log }));
  return app;
}
