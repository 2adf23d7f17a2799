import express, { type Express } from 'express';
import { Registry } from 'prom-client';
import type { BridgeTracing } from '../../observe/trace-context.js';
import type { ReceiveEffects } from '../receive-webhook.js';
import { createReceiverMetrics } from '../receiver-metrics.js';
import type { ReceiverBusiness, ResolvedReceiverOptions } from '../receiver-options.js';
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
  /** What the webhook policy stores with (receive-webhook.ts), for a business (null: the only one). */
  effectsFor: (business: string | null) => ReceiveEffects;
  tracing: BridgeTracing | undefined;
  /** More routes, mounted before the JSON 404 handler. */
  routes: ((app: Express) => void) | undefined;
}

/** The receiver's Express app, and (for a receiver of several businesses) a way to change them. */
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
  const byBusiness = settings.businesses !== undefined;
  const answer = createWebhookAnswerer({
    states,
    metrics: createReceiverMetrics(deps.metrics ?? new Registry(), { byBusiness }),
    log,
    repeatLogIntervalMs: settings.repeatLogIntervalMs,
  });
  const routeFor = (path: string, secrets: readonly string[], business: string | null) =>
    createWebhookRoute({
      path,
      business,
      bodyLimitBytes: settings.bodyLimitBytes,
      verify: createSecretVerifier(secrets),
      effects: deps.effectsFor(business),
      tracing: deps.tracing,
      readBody: createBodyReader(settings.bodyLimitBytes),
      states,
      answer,
    });
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  mountHealthRoutes(app, deps);
  let businesses: BusinessRoutes | undefined;
  if (settings.businesses === undefined) {
    app.all(settings.path, routeFor(settings.path, settings.secrets ?? [], null));
  } else {
    businesses = createBusinessRoutes(
      (business) => routeFor(business.path, business.secrets, business.id),
      settings.businesses,
    );
    app.use(businesses.handler);
  }
  deps.routes?.(app);
  app.use(createNotFoundHandler(businesses === undefined ? settings.path : null));
  app.use(createErrorHandler({ bodyLimitBytes: settings.bodyLimitBytes, states, answer, log }));
  return {
    app,
    setBusinesses(next) {
      if (businesses === undefined)
        throw new Error('this receiver serves one business: it was built without businesses');
      businesses.set(next);
    },
    flushLogs: () => answer.flush(),
  };
}
