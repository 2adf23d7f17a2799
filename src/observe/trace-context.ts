import type { Telemetry } from 'bullmq';

/**
 * The seam between the bridge's hot paths and tracing. It imports nothing: with
 * tracing off (the default) no OpenTelemetry module is loaded at all (the import above is a type), and every traced call site
 * pays one read of `active` below. With tracing on, src/observe/tracing.ts (loaded with a dynamic
 * import by the composition root) installs an implementation backed by the OpenTelemetry SDK.
 *
 * The implementation is held here, set once per process, rather than passed down every
 * constructor, for the same reason @opentelemetry/api keeps a global tracer provider: spans are
 * started at the edges (receiver, platform client, forwarder, event runs) that are built in many
 * places, and a port threaded through all of them would touch half the code for one feature.
 */

/** W3C Trace Context of one event, carried in its job's batch item (queue/event-job.ts). */
export interface TraceCarrier {
  traceparent: string;
  tracestate?: string | undefined;
}

/** What a span learns as it goes; tracing.ts maps these to attribute names. */
export interface SpanFacts {
  conversationId?: string | null;
  eventKey?: string;
  eventKind?: string;
  channel?: string;
  channelId?: string | null;
  /** The receiver's outcome (`queued`, `duplicate`, `unauthorized`...). */
  outcome?: string;
  statusCode?: number | null;
  /** Rules that matched, in order. */
  rules?: readonly string[];
  actions?: number;
  jobId?: string;
  /** A failure's short code (`RATE_LIMITED`, `SERVER`...) when the span did not fail with an error. */
  errorType?: string;
}

export interface TraceSpan {
  annotate(facts: SpanFacts): void;
  /** Records the error on the span and marks it failed. */
  fail(error: unknown): void;
  /** Ends the span (a second call does nothing). */
  end(): void;
}

export interface HttpCallFacts {
  method: string;
  /** The address called; tracing.ts drops its credentials and query before recording it. */
  url: string;
  /** 1 for the first attempt. */
  attempt: number;
}

/** The operations the bridge traces. Spans start as children of the active span unless said. */
export interface BridgeTracing {
  /** `webhook receive` (SERVER), continuing the sender's `traceparent` when it sent one. */
  webhook(head: { method: string; path: string; headers: Record<string, unknown> }): TraceSpan;
  /** Runs `fn` with `span` active, so the spans `fn` starts are its children. */
  within<T>(span: TraceSpan, fn: () => T): T;
  /** `queue store` (PRODUCER) around storing one event; its context travels with the event. */
  store<R>(event: TracedEvent, ingest: () => Promise<R>, outcome: (result: R) => SpanFacts): Promise<R>;
  /** `event process` (CONSUMER): parent from the event's carrier, linked to the job's own span. */
  processEvent<R>(item: TracedItem, run: () => Promise<R>, facts: (result: R) => SpanFacts): Promise<R>;
  /** `platform <operation>` (CLIENT): one span per HTTP attempt. */
  platformCall(operation: string, call: HttpCallFacts): TraceSpan;
  /** `forward <destination>` (CLIENT): one span per HTTP attempt. */
  forwardCall(destination: string, call: HttpCallFacts): TraceSpan;
  /** BullMQ's own telemetry (bullmq-otel), for the worker's queues and workers. */
  readonly bullmq: Telemetry;
  /** Exports what is left (bounded); later spans are dropped. */
  shutdown(): Promise<void>;
}

export interface TracedEvent {
  key: string;
  conversationId: string | null;
  kind: string;
  channel: { engine: string; id: string | null };
}

export interface TracedItem {
  event: TracedEvent;
  trace?: TraceCarrier | undefined;
}

let active: BridgeTracing | undefined;

/** The tracing in force, or undefined when tracing is off (the cheap check of every call site). */
export function activeTracing(): BridgeTracing | undefined {
  return active;
}

/** Installs (or, with undefined, removes) the process's tracing. Only the composition root calls it. */
export function installTracing(tracing: BridgeTracing | undefined): void {
  active = tracing;
  if (!tracing) carriers = new WeakMap();
}

/**
 * The receiver hands an event to the group commit, which stores many events as one job; the
 * carrier of each event rides beside it here, keyed by the event object, until ingest-event.ts
 * writes it into the event's batch item. Kept out of ConversationEvent, which is the canonical
 * shape every stage speaks (and what `explain` and recordings show).
 */
let carriers = new WeakMap<object, TraceCarrier>();

export function rememberCarrier(event: object, carrier: TraceCarrier): void {
  carriers.set(event, carrier);
}

/** The carrier of an event being stored, or undefined (always, with tracing off). */
export function carrierOf(event: object): TraceCarrier | undefined {
  return active ? carriers.get(event) : undefined;
}

/** BullMQ's `telemetry` option when tracing is on: spread it into a Queue's or Worker's options. */
export function bullmqTelemetry(): { telemetry?: Telemetry } {
  return active ? { telemetry: active.bullmq } : {};
}

/** Runs one event's processing in its `event process` span when tracing is on. */
export function traceEventRun<R>(
  item: TracedItem,
  run: () => Promise<R>,
  facts: (result: R) => SpanFacts,
): Promise<R> {
  return active ? active.processEvent(item, run, facts) : run();
}
