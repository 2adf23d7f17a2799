import { Counter, Histogram, type Registry } from 'prom-client';
import type { WebhookOutcome } from './webhook-reply.js';

export interface ReceiverMetrics {
  /** Counts one webhook request and how long it took to answer, by business (none: its path is no business's). */
  observe(outcome: WebhookOutcome, seconds: number, business: string | undefined): void;
}

const REQUESTS = 'convo_bridge_webhooks_total';
const ACK_SECONDS = 'convo_bridge_webhook_ack_seconds';

/**
 * Registers the receiver's metrics on the given registry (the one a later `/metrics` endpoint
 * serves). A registry that already has them (a second receiver in one process, tests) is reused
 * instead of throwing prom-client's duplicate-name error. Labelled with `business` (ids from the
 * config only, so the label stays bounded; `default` for a config without `businesses:`; empty for
 * a request that reached no business's path).
 */
export function createReceiverMetrics(registry: Registry): ReceiverMetrics {
  const labelNames = ['outcome', 'business'];
  const requests =
    (registry.getSingleMetric(REQUESTS) as Counter | undefined) ??
    new Counter({
      name: REQUESTS,
      help: 'Webhook requests by outcome (queued, duplicate, test, unknown_event, quarantined, unauthorized, ...).',
      labelNames,
      registers: [registry],
    });
  const ack =
    (registry.getSingleMetric(ACK_SECONDS) as Histogram | undefined) ??
    new Histogram({
      name: ACK_SECONDS,
      help: 'Time from the start of a webhook request to its answer, by outcome.',
      labelNames,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    });
  return {
    observe(outcome, seconds, business) {
      const labels = { outcome, business: business ?? '' };
      requests.inc(labels);
      ack.observe(labels, seconds);
    },
  };
}
