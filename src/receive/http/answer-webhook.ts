import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import { describeError } from '../../base/errors.js';
import { createRepeatSummary } from '../../observe/repeat-summary.js';
import type { TraceSpan } from '../../observe/trace-context.js';
import type { ReceiveOutcome } from '../receive-webhook.js';
import type { ReceiverMetrics } from '../receiver-metrics.js';
import type { WebhookOutcome } from '../webhook-reply.js';
import { sendReply } from './send-reply.js';

/** What the receiver keeps about a webhook request between its head and its answer. */
export interface RequestState {
  started: bigint;
  /** The business whose path it came to. */
  business: string;
  /** `webhook receive`, when tracing is on. */
  span?: TraceSpan;
}

/** The webhook requests under way (set by the webhook route, read when answering). */
export type RequestStates = WeakMap<Request, RequestState>;

export type AnswerWebhook = (req: Request, res: Response, outcome: ReceiveOutcome) => void;

/** The answerer, and the count of repeated 503s not logged yet (logged by `flush` when closing). */
export type WebhookAnswerer = AnswerWebhook & { flush(): void };

/** The fields of every webhook's log line. */
interface WebhookLogFields {
  business?: string;
  outcome: WebhookOutcome;
  status: number;
  ms: number;
  conversationId: string | null;
  eventKey: string | null;
}

/**
 * Answers a webhook request, counts it, ends its span and writes its log line: 503s for the same
 * reason as one line per `repeatLogIntervalMs` with their count. Made once per receiver.
 */
export function createWebhookAnswerer(deps: {
  states: RequestStates;
  metrics: ReceiverMetrics;
  log: Logger;
  repeatLogIntervalMs: number;
}): WebhookAnswerer {
  const { states, metrics, log } = deps;
  const unavailable = unavailableLog(log, deps.repeatLogIntervalMs);
  const answer = (req: Request, res: Response, outcome: ReceiveOutcome) => {
    const { reply } = outcome;
    sendReply(res, reply);
    const state = states.get(req);
    const seconds = state ? Number(process.hrtime.bigint() - state.started) / 1e9 : 0;
    metrics.observe(reply.outcome, seconds, state?.business);
    const fields: WebhookLogFields = {
      ...(state ? { business: state.business } : {}),
      outcome: reply.outcome,
      status: reply.status,
      ms: Math.round(seconds * 1e4) / 10,
      conversationId: outcome.event?.conversationId ?? outcome.problem?.conversationId ?? null,
      eventKey: outcome.event?.key ?? null,
    };
    if (state?.span) endWebhookSpan(state.span, outcome);
    if (reply.outcome === 'unavailable') {
      const err = describeError(outcome.error);
      unavailable.note(err, { ...fields, err });
    } else logWebhook(log, req, outcome, fields);
  };
  return Object.assign(answer, { flush: () => unavailable.flush() });
}

/**
 * The 503 warnings: the first for a reason at once, the next ones for that reason counted and
 * logged as one line at the end of the interval (a cluster without replicas answered 200 webhooks
 * 503 with 200 identical warnings).
 */
function unavailableLog(log: Logger, intervalMs: number) {
  const seconds = Math.round(intervalMs / 1000);
  return createRepeatSummary<WebhookLogFields & { err: string }>({
    intervalMs,
    log: (fields, repeated) => {
      if (repeated === 0) log.warn(fields, 'webhook answered 503: Redis could not store it');
      else {
        log.warn(
          { ...fields, repeated },
          `webhook answered 503: Redis could not store it (${repeated} more for the same reason in the last ${seconds} s; the fields are the last one's)`,
        );
      }
    },
  });
}

/** The webhook's log line: a warning for a refused secret, info for the quarantine (503s: unavailableLog). */
function logWebhook(
  log: Logger,
  req: Request,
  outcome: ReceiveOutcome,
  fields: {
    business?: string;
    outcome: string;
    status: number;
    ms: number;
    conversationId: string | null;
    eventKey: string | null;
  },
): void {
  switch (outcome.reply.outcome) {
    case 'unauthorized':
      log.warn(
        {
          ...fields,
          remoteAddress: req.socket.remoteAddress ?? null,
          // Which headers were present, never their values.
          secretHeaders: ['authorization', 'secret'].filter((h) => req.headers[h] !== undefined),
        },
        'webhook rejected: secret missing or wrong',
      );
      break;
    case 'quarantined':
    case 'unknown_event':
      log.info(
        {
          ...fields,
          quarantineId: outcome.quarantineId ?? null,
          reason: outcome.problem?.reason ?? 'unknown_event',
          detail: outcome.problem?.message ?? null,
          eventName: outcome.event?.name ?? outcome.problem?.eventName ?? null,
        },
        'webhook kept in quarantine',
      );
      break;
    case 'error':
      log.error({ ...fields, err: outcome.error }, 'webhook failed with an internal error');
      break;
    default:
      if (log.isLevelEnabled('debug')) log.debug(fields, 'webhook');
  }
}

/** Ends a webhook's span with what the receiver made of it. */
function endWebhookSpan(span: TraceSpan, outcome: ReceiveOutcome): void {
  const { reply, event } = outcome;
  span.annotate({
    outcome: reply.outcome,
    statusCode: reply.status,
    ...(event
      ? {
          conversationId: event.conversationId,
          eventKey: event.key,
          eventKind: event.kind,
          channel: event.channel.engine,
          channelId: event.channel.id,
        }
      : outcome.problem?.conversationId
        ? { conversationId: outcome.problem.conversationId }
        : {}),
  });
  if (outcome.error !== undefined) span.fail(outcome.error);
  else if (reply.status >= 500) span.annotate({ errorType: String(reply.status) });
  span.end();
}
