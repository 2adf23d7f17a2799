import type { Express } from 'express';
import type { ConversationEvent } from '../events/conversation-event.js';
import { activeTracing, type BridgeTracing } from '../observe/trace-context.js';
import { createEventProducer, DEFAULT_EVENT_JOB_OPTIONS, type EventProducer } from './event-producer.js';
import { createReceiverApp } from './http/receiver-app.js';
import { receiverLogger } from './http/receiver-logger.js';
import { createReceiverServers, type ListeningReceiver } from './http/receiver-servers.js';
import { type QuarantineInput, quarantineBody } from './quarantine-store.js';
import type { ReceiveEffects } from './receive-webhook.js';
import {
  type ReceiverBusiness,
  type ReceiverOptions,
  type ResolvedReceiverOptions,
  resolveReceiverOptions,
} from './receiver-options.js';

export interface Receiver {
  /** The Express app (mount it elsewhere, or call `listen`). */
  readonly app: Express;
  /** The webhook path in use. */
  readonly path: string;
  /** Listens on `host:port` (default 127.0.0.1, port 0 = a free one). */
  listen(port?: number, host?: string): Promise<ListeningReceiver>;
  /** Connected to Redis and not closed (cheap; `GET /readyz` does a real write). */
  isReady(): boolean;
  /**
   * A receiver of several businesses (built with `businesses`): serve these from the next request
   * on; a removed business's path answers 404 (issue 26, hot reload). Throws for a receiver of one.
   */
  setBusinesses(businesses: readonly ReceiverBusiness[]): void;
  /** Stops every server it started and closes Redis. Idempotent. */
  close(): Promise<void>;
}

/**
 * The webhook receiver: verifies the shared secret, normalises the body into a ConversationEvent,
 * stores it durably and exactly once (ingestEvent), and only then answers `{"success":true}`.
 * Answers are JSON only, never an HTML page or a stack trace. See receive-webhook.ts for the order
 * of checks and webhook-reply.ts for why each status code; http/ holds the Express and Node adapter.
 */
export function createReceiver(options: ReceiverOptions): Receiver {
  const settings = resolveReceiverOptions(options);
  const log = receiverLogger(options.logger);
  const producer = createEventProducer({
    // Where events are stored (EventStoreTarget) travels as the caller gave it.
    ...options,
    prefix: settings.prefix,
    dedupeWindowSeconds: settings.dedupeWindowSeconds,
    jobOptions: { ...DEFAULT_EVENT_JOB_OPTIONS, ...options.jobOptions },
    eventStreamMaxLen: settings.eventStreamMaxLen,
    commandTimeoutMs: Math.min(1_000, settings.enqueueTimeoutMs),
    logger: log,
  });
  // Read once: tracing is installed (or not) before the receiver is built (run-bridge.ts).
  const tracing = activeTracing();
  const effects = new Map<string | null, ReceiveEffects>();
  const effectsFor = (business: string | null): ReceiveEffects => {
    let made = effects.get(business);
    if (made === undefined) {
      made = receiveEffects(producer, business, settings, tracing);
      effects.set(business, made);
    }
    return made;
  };
  const { app, setBusinesses, flushLogs } = createReceiverApp({
    settings,
    effectsFor,
    tracing,
    probe: () => producer.probe(),
    redisAddress: producer.address,
    readiness: options.readiness,
    readinessDetails: options.readinessDetails,
    metrics: options.metrics,
    routes: options.routes,
    log,
  });
  const servers = createReceiverServers(app, log);
  let closing: Promise<void> | undefined;

  return {
    app,
    path: settings.path,
    async listen(port = 0, host = '127.0.0.1') {
      // Take traffic once Redis is connected, so the first deliveries after a start are not
      // answered 503 while the connection is still being made. Start anyway if Redis stays away:
      // webhooks are then answered 503 (and retried) and /readyz says why.
      await producer.connected(Math.max(2_000, settings.enqueueTimeoutMs)).catch(() => {
        log.warn('listening although Redis is not connected yet; webhooks are answered 503 until it is');
      });
      return servers.listen(port, host);
    },
    isReady: () => producer.isConnected() && closing === undefined,
    setBusinesses,
    close() {
      closing ??= (async () => {
        await servers.closeAll();
        flushLogs();
        await producer.close();
      })();
      return closing;
    },
  };
}

/**
 * What the webhook policy stores with, for one business (null: the only one): the producer (traced
 * when tracing is on) and the quarantine, both with that business's keys.
 */
function receiveEffects(
  producer: EventProducer,
  business: string | null,
  settings: ResolvedReceiverOptions,
  tracing: BridgeTracing | undefined,
): ReceiveEffects {
  const ingest = producer.ingestFor(business);
  const quarantineStore = {
    redis: producer.redis,
    keys: producer.layout.forBusiness(business).global,
    maxEntries: settings.quarantineMax,
    maxBodyBytes: settings.quarantineBodyBytes,
    maxAgeSeconds: settings.quarantineMaxAgeSeconds,
  };
  return {
    ingest: tracing
      ? (event: ConversationEvent) =>
          tracing.store(
            event,
            () => ingest(event),
            (result) => ({ outcome: result.outcome, jobId: result.jobId }),
          )
      : ingest,
    quarantine: (input: QuarantineInput) => quarantineBody(quarantineStore, input),
    enqueueTimeoutMs: settings.enqueueTimeoutMs,
  };
}
