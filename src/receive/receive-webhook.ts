import type { IncomingHttpHeaders } from 'node:http';
import type { ConversationEvent } from '../events/conversation-event.js';
import type { IngestResult } from '../queue/ingest-event.js';
import { checkContentType } from './check-content-type.js';
import { type NormalizeProblem, normalizeEvent } from './normalize/normalize-event.js';
import type { QuarantineInput } from './quarantine-store.js';
import type { SecretVerifier } from './verify-secret.js';
import {
  badRequest,
  payloadTooLarge,
  REPLIES,
  unsupportedMediaType,
  type WebhookReply,
} from './webhook-reply.js';
import { withTimeout } from './with-timeout.js';

/**
 * The receiver's HTTP policy, framework-free (the Express app is a thin adapter around it).
 *
 * Order of checks, cheapest and least revealing first:
 *   1. method (405): only POST is a delivery;
 *   2. secret (401), from the headers alone, so an unauthenticated caller can never make the
 *      receiver read or parse a body (up to the limit) and learns nothing about what it would accept;
 *   3. Content-Type (415);
 *   4. declared Content-Length over the limit (413) before reading; a chunked body is cut off at
 *      the limit while it is read (also 413);
 *   5. JSON syntax and "is an object" (400);
 *   6. understanding (test ping, unknown event, quarantine: 200) and durable storage (200, or 503).
 */
export interface WebhookHead {
  method: string;
  headers: IncomingHttpHeaders;
}

export interface HeadPolicy {
  verify: SecretVerifier;
  bodyLimitBytes: number;
}

/** Steps 1-4. Returns the rejection, or undefined when the body may be read. */
export function checkWebhookHead(head: WebhookHead, policy: HeadPolicy): WebhookReply | undefined {
  if (head.method !== 'POST') return REPLIES.methodNotAllowed;
  if (!policy.verify(head.headers)) return REPLIES.unauthorized;
  const contentTypeProblem = checkContentType(head.headers['content-type']);
  if (contentTypeProblem !== undefined) return unsupportedMediaType(contentTypeProblem);
  const declared = head.headers['content-length'];
  if (declared !== undefined && Number(declared) > policy.bodyLimitBytes) {
    return payloadTooLarge(policy.bodyLimitBytes);
  }
  return undefined;
}

export interface ReceiveEffects {
  ingest(event: ConversationEvent): Promise<IngestResult>;
  quarantine(input: QuarantineInput): Promise<{ entry: { id: string } }>;
  /** Bound on storing one event (or quarantining one body); past it the answer is 503. */
  enqueueTimeoutMs: number;
}

export interface ReceiveOutcome {
  reply: WebhookReply;
  /** The event, when the body was understood (for logs: conversation id and event key). */
  event?: ConversationEvent;
  ingest?: IngestResult;
  problem?: NormalizeProblem;
  quarantineId?: string;
  /** Why storage failed (503), for the log. */
  error?: unknown;
}

const UTF8_BOM = '\uFEFF';

/** Steps 5-6, on a body already read within the limit. Never throws. */
export async function receiveWebhookBody(
  effects: ReceiveEffects,
  raw: Buffer,
  receivedAt: Date,
): Promise<ReceiveOutcome> {
  const parsed = parseJsonObject(raw);
  if ('reply' in parsed) return parsed;
  const result = normalizeEvent(parsed.body, { receivedAt });
  try {
    if (!result.ok) {
      const { problem } = result;
      const stored = await withTimeout(
        effects.quarantine({ ...problem, rawBody: raw, receivedAt }),
        effects.enqueueTimeoutMs,
        'Redis did not store the quarantined body',
      );
      return { reply: REPLIES.quarantined, problem, quarantineId: stored.entry.id };
    }
    const { event } = result;
    if (event.kind === 'test') return { reply: REPLIES.test, event };
    if (event.kind === 'unknown') {
      const stored = await withTimeout(
        effects.quarantine({
          reason: 'unknown_event',
          message: `event name "${event.name}" is not one this version knows; replay it after an upgrade that does`,
          eventName: event.name,
          conversationId: event.conversationId,
          rawBody: raw,
          receivedAt,
        }),
        effects.enqueueTimeoutMs,
        'Redis did not store the unknown event',
      );
      return { reply: REPLIES.unknownEvent, event, quarantineId: stored.entry.id };
    }
    const ingest = await withTimeout(
      effects.ingest(event),
      effects.enqueueTimeoutMs,
      'Redis did not store the event',
    );
    return { reply: ingest.outcome === 'queued' ? REPLIES.queued : REPLIES.duplicate, event, ingest };
  } catch (error) {
    return {
      reply: REPLIES.unavailable,
      error,
      ...(result.ok ? { event: result.event } : { problem: result.problem }),
    };
  }
}

function parseJsonObject(raw: Buffer): { body: Record<string, unknown> } | ReceiveOutcome {
  let text = raw.toString('utf8');
  if (text.startsWith(UTF8_BOM)) text = text.slice(1);
  if (text.trim() === '') {
    return { reply: badRequest('the body is empty; send the event as one JSON object') };
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    // The parser's message quotes the body; it is not echoed back or logged.
    return { reply: badRequest('the body is not valid JSON; send the event as one JSON object') };
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    const what = body === null ? 'null' : Array.isArray(body) ? 'an array' : `a ${typeof body}`;
    return {
      reply: badRequest(
        `the body is ${what}, not a JSON object; the platform sends one JSON object per event`,
      ),
    };
  }
  return { body: body as Record<string, unknown> };
}
