import type { Express } from 'express';
import type { BusinessNaming } from '../events/business-naming.js';
import type { ConversationEvent } from '../events/conversation-event.js';
import { activeTracing, type BridgeTracing } from '../observe/trace-context.js';
import type { IngestResult } from '../queue/ingest-event.js';
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
  type ServedBusiness,
} from './receiver-options.js';

export interface Receiver {
  /** The Express app (mount it elsewhere, or call `listen`). */
  readonly app: Express;
  /** The webhook path of the first business served (the only one of `path` and `secrets`). */
  readonly path: string;
  /** Listens on `host:port` (default 127.0.0.1, port 0 = a free one). */
  listen(port?: number, host?: string): Promise<ListeningReceiver>;
  /** Connected to Redis and not closed (cheap; `GET /readyz` does a real write). */
  isReady(): boolean;
  /**
   * The exactly-once ingest of a business's naming, traced like a webhook's: what a quarantined
   * body's replay through the operator API stores its event with.
   */
  ingestFor(naming: BusinessNaming): (event: ConversationEvent) => Promise<IngestResult>;
  /** Serves these businesses from the next request on; a removed business's path answers 404 (hot reload). */
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
  const effects = new Map<string, ReceiveEffects>();
  const effectsFor = (naming: BusinessNaming): ReceiveEffects => {
    let made = effects.get(naming.tag);
    if (made === undefined) {
      made = receiveEffects(producer, naming, settings, tracing);
      effects.set(naming.tag, made);
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
    path: (settings.businesses[0] as ServedBusiness).path,
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
    ingestFor: (naming) => effectsFor(naming).ingest,
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
 * What the webhook policy stores with, for one business's naming: the producer (traced when
 * tracing is on) and the quarantine, both with that naming's keys.
 */
function receiveEffects(
  producer: EventProducer,
  naming: BusinessNaming,
  settings: ResolvedReceiverOptions,
  tracing: BridgeTracing | undefined,
): ReceiveEffects {
  const ingest = producer.ingestFor(naming);
  const quarantineStore = {
    redis: producer.redis,
    keys: producer.layout.forNaming(naming).global,
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
