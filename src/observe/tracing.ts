import {
  type Attributes,
  type Context,
  context,
  DiagLogLevel,
  diag,
  type Link,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type ReadableSpan,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_REQUEST_RESEND_COUNT,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVICE_NAME,
  ATTR_SERVICE_VERSION,
  ATTR_URL_FULL,
  ATTR_URL_PATH,
} from '@opentelemetry/semantic-conventions';
import { BullMQOtel } from 'bullmq-otel';
import { maskPersonalData } from '../base/personal-data.js';
import type {
  BridgeTracing,
  HttpCallFacts,
  SpanFacts,
  TraceCarrier,
  TracedEvent,
  TraceSpan,
} from './trace-context.js';
import { rememberCarrier } from './trace-context.js';
import type { TracingSettings } from './tracing-settings.js';

/**
 * The OpenTelemetry SDK behind the tracing port (trace-context.ts). Loaded only with a dynamic
 * import when tracing is on, so a bridge without tracing never loads these modules.
 *
 * Spans (see docs/operations.md, "Tracing"):
 *   webhook receive (SERVER) -> queue store (PRODUCER)   receiver, one per webhook / event
 *     -> event process (CONSUMER)                        worker, parent = the event's carrier
 *          -> platform <operation> (CLIENT)              one per HTTP attempt
 *          -> forward <destination> (CLIENT)             one per HTTP attempt
 *          -> add timers.* (PRODUCER, BullMQ) -> process timers (CONSUMER, BullMQ) -> platform...
 * BullMQ's own telemetry (bullmq-otel) gives each job of the worker a `process events` span;
 * each event's span links to it (a job carries the events of many webhooks, so it cannot be
 * their parent).
 */

/** Attributes of the bridge's own vocabulary (no semantic convention names these). */
const ATTR = {
  conversationId: 'convo_bridge.conversation_id',
  eventKey: 'convo_bridge.event_key',
  eventKind: 'convo_bridge.event_kind',
  channel: 'convo_bridge.channel',
  channelId: 'convo_bridge.channel_id',
  outcome: 'convo_bridge.outcome',
  rules: 'convo_bridge.rules',
  actions: 'convo_bridge.actions',
  jobId: 'convo_bridge.job_id',
  operation: 'convo_bridge.platform.operation',
  destination: 'convo_bridge.destination',
  attempt: 'convo_bridge.attempt',
  // Messaging semantic conventions (still "development" in semconv, so not in its stable export).
  messagingSystem: 'messaging.system',
  messagingOperation: 'messaging.operation.type',
  messagingDestination: 'messaging.destination.name',
} as const;

const TRACER_NAME = 'convo-bridge';

export interface StartTracingOptions {
  version: string;
  /** `start`, `serve` or `work`, as a resource attribute. */
  mode: string;
  /** Bound on the final export at shutdown. */
  shutdownTimeoutMs?: number;
  /** Where the SDK's own warnings go (a collector that does not answer...), at most one a minute. */
  warn?: (message: string) => void;
}

/**
 * Sets up the SDK: the resource, the SDK's warnings, the OTLP exporter behind a batch processor,
 * and the global context manager, propagator and tracer provider.
 */
function installSdk(
  settings: Extract<TracingSettings, { enabled: true }>,
  options: StartTracingOptions,
): BasicTracerProvider {
  const resource = detectResources({ detectors: [envDetector] }).merge(
    resourceFromAttributes({
      [ATTR_SERVICE_NAME]: settings.serviceName,
      [ATTR_SERVICE_VERSION]: options.version,
      'convo_bridge.mode': options.mode,
    }),
  );
  if (options.warn) diag.setLogger(throttled(options.warn, 60_000, settings.url), DiagLogLevel.WARN);
  const exporter = new OTLPTraceExporter({ url: settings.url });
  const provider = new BasicTracerProvider({
    resource,
    spanProcessors: [withoutBullmqHousekeeping(new BatchSpanProcessor(exporter))],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  return provider;
}

/** Exports what is left, waiting at most `boundMs`, then takes the SDK's globals down. */
async function shutdownSdk(provider: BasicTracerProvider, boundMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    provider.shutdown().catch(() => undefined),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, boundMs);
    }),
  ]).finally(() => clearTimeout(timer));
  trace.disable();
  propagation.disable();
  context.disable();
  diag.disable();
}

type StartSpan = (
  name: string,
  kind: SpanKind,
  attributes: Attributes,
  parent?: Context,
  links?: Link[],
) => Span;

/** The receiver's spans: `webhook receive`, and `queue store` around storing one event. */
function receiverSpans(start: StartSpan): Pick<BridgeTracing, 'webhook' | 'store'> {
  return {
    webhook(head) {
      const parent = propagation.extract(ROOT_CONTEXT, head.headers);
      return handle(
        start(
          'webhook receive',
          SpanKind.SERVER,
          {
            [ATTR_HTTP_REQUEST_METHOD]: head.method,
            [ATTR_URL_PATH]: head.path,
            [ATTR_HTTP_ROUTE]: head.path,
          },
          parent,
        ),
      );
    },
    async store(event, ingest, outcome) {
      const span = start('queue store', SpanKind.PRODUCER, {
        ...eventAttributes(event),
        [ATTR.messagingSystem]: 'bullmq',
        [ATTR.messagingOperation]: 'send',
        [ATTR.messagingDestination]: 'events',
      });
      rememberCarrier(event, carrierFor(trace.setSpan(context.active(), span)));
      return await runInSpan(span, ingest, outcome);
    },
  };
}

/** The worker's spans: `event process`, and one per HTTP attempt to the platform or a forward. */
function workerSpans(start: StartSpan): Pick<BridgeTracing, 'processEvent' | 'platformCall' | 'forwardCall'> {
  return {
    async processEvent(item, run, facts) {
      const parent = item.trace ? propagation.extract(ROOT_CONTEXT, item.trace) : ROOT_CONTEXT;
      // The job's own span (BullMQ's `process events`), when there is one, is linked, not the parent.
      const job = trace.getSpan(context.active())?.spanContext();
      const span = start(
        'event process',
        SpanKind.CONSUMER,
        {
          ...eventAttributes(item.event),
          [ATTR.messagingSystem]: 'bullmq',
          [ATTR.messagingOperation]: 'process',
          [ATTR.messagingDestination]: 'events',
        },
        parent,
        job ? [{ context: job }] : undefined,
      );
      return await runInSpan(span, () => context.with(trace.setSpan(context.active(), span), run), facts);
    },
    platformCall(operation, call) {
      return handle(
        start(`platform ${operation}`, SpanKind.CLIENT, {
          ...httpAttributes(call),
          [ATTR.operation]: operation,
        }),
      );
    },
    forwardCall(destination, call) {
      return handle(
        start(`forward ${destination}`, SpanKind.CLIENT, {
          ...httpAttributes(call),
          [ATTR.destination]: destination,
        }),
      );
    },
  };
}

export function startTracing(
  settings: Extract<TracingSettings, { enabled: true }>,
  options: StartTracingOptions,
): BridgeTracing {
  const provider = installSdk(settings, options);
  const tracer = provider.getTracer(TRACER_NAME, options.version);
  const bullmq = new BullMQOtel({ tracerName: 'bullmq', version: options.version });

  const start: StartSpan = (name, kind, attributes, parent, links) =>
    tracer.startSpan(name, { kind, attributes, ...(links ? { links } : {}) }, parent ?? context.active());

  let closing: Promise<void> | undefined;
  return {
    bullmq,
    ...receiverSpans(start),
    within(traced, fn) {
      const span = spans.get(traced);
      return span ? context.with(trace.setSpan(context.active(), span), fn) : fn();
    },
    ...workerSpans(start),
    shutdown() {
      closing ??= shutdownSdk(provider, options.shutdownTimeoutMs ?? 3_000);
      return closing;
    },
  };
}

/** The SDK's diagnostics as warnings, one per interval: an unreachable collector must not flood the log. */
function throttled(warn: (message: string) => void, intervalMs: number, url: string) {
  let last = Number.NEGATIVE_INFINITY;
  const say = (message: string, ...args: unknown[]) => {
    const now = Date.now();
    if (now - last < intervalMs) return;
    last = now;
    const detail = [errorMessage(message), ...args.map(errorMessage)].join(' ');
    warn(
      `tracing: ${detail} (spans may be lost: check that the collector at ${safeUrl(url)} answers; repeats are not logged for a minute)`,
    );
  };
  const quiet = () => {};
  return { error: say, warn: say, info: quiet, debug: quiet, verbose: quiet };
}

/** The SDK's error handler logs an export failure as the error's JSON: keep its message. */
function errorMessage(value: unknown): string {
  if (value instanceof Error) return value.message;
  const text = String(value);
  try {
    const parsed = JSON.parse(text) as { message?: unknown };
    if (typeof parsed.message === 'string') return parsed.message;
  } catch {
    // not JSON: the text as it is
  }
  return text;
}

/** The W3C carrier of a context (what travels in the job). */
function carrierFor(ctx: Context): TraceCarrier {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  const { traceparent, tracestate } = carrier;
  return tracestate ? { traceparent: traceparent ?? '', tracestate } : { traceparent: traceparent ?? '' };
}

function eventAttributes(event: TracedEvent): Attributes {
  return {
    [ATTR.conversationId]: event.conversationId ?? '',
    [ATTR.eventKey]: event.key,
    [ATTR.eventKind]: event.kind,
    [ATTR.channel]: event.channel.engine,
    ...(event.channel.id ? { [ATTR.channelId]: event.channel.id } : {}),
  };
}

function httpAttributes(call: HttpCallFacts): Attributes {
  return {
    [ATTR_HTTP_REQUEST_METHOD]: call.method,
    [ATTR_URL_FULL]: safeUrl(call.url),
    [ATTR.attempt]: call.attempt,
    ...(call.attempt > 1 ? { [ATTR_HTTP_REQUEST_RESEND_COUNT]: call.attempt - 1 } : {}),
  };
}

/** The address without credentials or query (a query may carry a token). */
export function safeUrl(text: string): string {
  try {
    const url = new URL(text);
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return '[not a URL]';
  }
}

const spans = new WeakMap<TraceSpan, Span>();

/** Runs `work` in `span`: its result's facts annotate the span, a throw marks it failed; it always ends. */
async function runInSpan<T>(span: Span, work: () => Promise<T>, facts: (result: T) => SpanFacts): Promise<T> {
  const traced = handle(span);
  try {
    const result = await work();
    traced.annotate(facts(result));
    return result;
  } catch (error) {
    traced.fail(error);
    throw error;
  } finally {
    traced.end();
  }
}

function handle(span: Span): TraceSpan {
  let ended = false;
  const traced: TraceSpan = {
    annotate(facts: SpanFacts) {
      span.setAttributes(factAttributes(facts));
      if (facts.errorType !== undefined) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: facts.errorType });
      }
    },
    fail(error: unknown) {
      const exception = error instanceof Error ? error : new Error(String(error));
      // Only name, message and stack, masked: the SDK would also copy an error's
      // `code`, and the messages are written to carry no customer data, but a span outlives a log.
      const message = maskPersonalData(exception.message);
      span.recordException({
        name: exception.name,
        message,
        ...(exception.stack ? { stack: maskPersonalData(exception.stack) } : {}),
      });
      const code = (error as { code?: unknown } | null)?.code;
      span.setAttribute(ATTR_ERROR_TYPE, typeof code === 'string' ? code : exception.name);
      span.setStatus({ code: SpanStatusCode.ERROR, message });
    },
    end() {
      if (ended) return;
      ended = true;
      span.end();
    },
  };
  spans.set(traced, span);
  return traced;
}

function factAttributes(facts: SpanFacts): Attributes {
  const out: Attributes = {};
  if (facts.conversationId !== undefined && facts.conversationId !== null)
    out[ATTR.conversationId] = facts.conversationId;
  if (facts.eventKey !== undefined) out[ATTR.eventKey] = facts.eventKey;
  if (facts.eventKind !== undefined) out[ATTR.eventKind] = facts.eventKind;
  if (facts.channel !== undefined) out[ATTR.channel] = facts.channel;
  if (facts.channelId !== undefined && facts.channelId !== null) out[ATTR.channelId] = facts.channelId;
  if (facts.outcome !== undefined) out[ATTR.outcome] = facts.outcome;
  if (facts.statusCode !== undefined && facts.statusCode !== null)
    out[ATTR_HTTP_RESPONSE_STATUS_CODE] = facts.statusCode;
  if (facts.rules !== undefined) out[ATTR.rules] = [...facts.rules];
  if (facts.actions !== undefined) out[ATTR.actions] = facts.actions;
  if (facts.jobId !== undefined) out[ATTR.jobId] = facts.jobId;
  if (facts.errorType !== undefined) out[ATTR_ERROR_TYPE] = facts.errorType;
  return out;
}

/**
 * BullMQ's telemetry also wraps its housekeeping (`getNextJob` on every poll, stalled-job checks,
 * lock renewals...) in INTERNAL spans: one trace per poll of an idle worker would bury the
 * bridge's own traces. Its PRODUCER and CONSUMER spans (`add`, `process`) are kept.
 */
function withoutBullmqHousekeeping(next: SpanProcessor): SpanProcessor {
  const keep = (span: ReadableSpan) =>
    !(span.instrumentationScope.name === 'bullmq' && span.kind === SpanKind.INTERNAL);
  return {
    onStart: (span, parent) => next.onStart(span, parent),
    onEnd: (span) => {
      if (keep(span)) next.onEnd(span);
    },
    forceFlush: () => next.forceFlush(),
    shutdown: () => next.shutdown(),
  };
}
