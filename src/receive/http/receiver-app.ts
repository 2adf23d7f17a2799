import express, { type Express } from 'express';
import { Registry } from 'prom-client';
import type { BusinessNaming } from '../../events/business-naming.js';
import type { BridgeTracing } from '../../observe/trace-context.js';
import type { ReceiveEffects } from '../receive-webhook.js';
import { createReceiverMetrics } from '../receiver-metrics.js';
import {
  type ReceiverBusiness,
  type ResolvedReceiverOptions,
  servedBusinesses,
} from '../receiver-options.js';
import { createSecretVerifier } from '../verify-secret.js';
import { createWebhookAnswerer, type RequestStates } from './answer-webhook.js';
import { type BusinessRoutes, createBusinessRoutes } from './business-routes.js';
import { type HealthRoutesDeps, mountHealthRoutes } from './health-routes.js';
import { createBodyReader } from './read-webhook-body.js';
import { createErrorHandler, createNotFoundHandler } from './unhandled-request.js';
import { createWebhookRoute } from './webhook-route.js';

export interface ReceiverAppDeps extends HealthRoutesDeps {
  settings: Pick<
    ResolvedReceiverOptions,
    'path' | 'secrets' | 'bodyLimitBytes' | 'businesses' | 'repeatLogIntervalMs'
  >;
  /** What the webhook policy stores with (receive-webhook.ts), for a business's naming. */
  effectsFor: (naming: BusinessNaming) => ReceiveEffects;
  tracing: BridgeTracing | undefined;
  /** More routes, mounted before the JSON 404 handler. */
  routes: ((app: Express) => void) | undefined;
}

/** The receiver's Express app, and a way to change the businesses it serves. */
export interface ReceiverApp {
  readonly app: Express;
  setBusinesses(businesses: readonly ReceiverBusiness[]): void;
  /** Logs the repeated 503s counted and not logged yet (a closing receiver). */
  flushLogs(): void;
}

/**
 * The receiver's Express app: health routes, the webhook route, the caller's routes, then JSON
 * answers for everything else (404) and for every error. Answers are JSON only, never an HTML page
 * or a stack trace.
 */
export function createReceiverApp(deps: ReceiverAppDeps): ReceiverApp {
  const { settings, log } = deps;
  const states: RequestStates = new WeakMap();
  const answer = createWebhookAnswerer({
    states,
    metrics: createReceiverMetrics(deps.metrics ?? new Registry()),
    log,
    repeatLogIntervalMs: settings.repeatLogIntervalMs,
  });
  const routeFor = (business: Required<ReceiverBusiness>) =>
    createWebhookRoute({
      path: business.path,
      business: business.id,
      bodyLimitBytes: settings.bodyLimitBytes,
      verify: createSecretVerifier(business.secrets),
      effects: deps.effectsFor(business.naming),
      tracing: deps.tracing,
      readBody: createBodyReader(settings.bodyLimitBytes),
      states,
      answer,
    });
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  mountHealthRoutes(app, deps);
  const businesses: BusinessRoutes = createBusinessRoutes(routeFor, settings.businesses);
  app.use(businesses.handler);
  deps.routes?.(app);
  // The path is named only when one business is served: several would tell a stranger which.
  app.use(createNotFoundHandler(() => businesses.onlyPath()));
  app.use(createErrorHandler({ bodyLimitBytes: settings.bodyLimitBytes, states, answer, log }));
  return {
    app,
    setBusinesses(next) {
      businesses.set(servedBusinesses(next));
    },
    flushLogs: () => answer.flush(),
  };
}
