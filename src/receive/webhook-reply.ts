/**
 * Every answer the webhook endpoint gives, with the reason for its status code (the same table is in
 * docs/receiver.md). The platform retries anything that is not a success (webhook-payloads.md §1:
 * "answer JSON success: true"; newer docs: any 2xx), so the rule is: 200 exactly when retrying
 * would not help (stored, already stored, or kept in the quarantine), 4xx when the request itself is
 * wrong, 503 when a retry later will succeed.
 */
export type WebhookOutcome =
  /** 200: stored as a new job. */
  | 'queued'
  /** 200: the same event (name + message id, or body hash) was stored before, within the window. */
  | 'duplicate'
  /** 200: the dashboard's test ping; answered, not queued (it carries no conversation). */
  | 'test'
  /** 200: an event name this version does not know; kept in the quarantine for replay after an upgrade. */
  | 'unknown_event'
  /** 200: authenticated JSON that cannot be understood; kept in the quarantine, so retrying is pointless. */
  | 'quarantined'
  /** 401: no secret header, or none of the accepted secrets matches. */
  | 'unauthorized'
  /** 400: the body is not JSON, or not a JSON object (array, string, number, null), or empty. */
  | 'bad_request'
  /** 405: a method other than POST on the webhook path. */
  | 'method_not_allowed'
  /** 413: the body is larger than the configured limit. */
  | 'payload_too_large'
  /** 415: the content type is not JSON (`application/json` or `application/*+json`, UTF-8). */
  | 'unsupported_media_type'
  /** 503: Redis could not store it in time; the platform retries and the retry is deduplicated. */
  | 'unavailable'
  /** 500: a bug; logged with its stack, answered without one. */
  | 'error';

export interface WebhookReply {
  status: number;
  /** The JSON text of the answer (built once for the fixed ones). */
  body: string;
  outcome: WebhookOutcome;
}

const SUCCESS = '{"success":true}';

const ok = (outcome: WebhookOutcome): WebhookReply => ({ status: 200, body: SUCCESS, outcome });

export const failure = (status: number, outcome: WebhookOutcome, error: string): WebhookReply => ({
  status,
  body: JSON.stringify({ success: false, error }),
  outcome,
});

export const REPLIES = {
  queued: ok('queued'),
  duplicate: ok('duplicate'),
  test: ok('test'),
  unknownEvent: ok('unknown_event'),
  quarantined: ok('quarantined'),
  unauthorized: failure(
    401,
    'unauthorized',
    'webhook secret missing or wrong: send the secret shown in the dashboard webhook settings as ' +
      '"Authorization: <secret>", "Authorization: Bearer <secret>" or "secret: <secret>", and make sure ' +
      'it is one of receiver.secrets',
  ),
  methodNotAllowed: failure(405, 'method_not_allowed', 'only POST is accepted on the webhook path'),
  unavailable: failure(
    503,
    'unavailable',
    'the event could not be stored right now (Redis unavailable); it was not accepted, retry later',
  ),
  internal: failure(
    500,
    'error',
    'internal error while receiving the webhook; it was not accepted, retry later',
  ),
  /** 417: an `Expect:` other than 100-continue (Node would answer an empty 417). */
  expectationFailed: failure(
    417,
    'bad_request',
    'the Expect header asks for something this receiver does not do; send the webhook without it',
  ),
} as const;

export const badRequest = (error: string): WebhookReply => failure(400, 'bad_request', error);

export const payloadTooLarge = (limitBytes: number): WebhookReply =>
  failure(
    413,
    'payload_too_large',
    `the body is larger than the limit of ${limitBytes} bytes; raise receiver.bodyLimitBytes if such events are real`,
  );

export const unsupportedMediaType = (error: string): WebhookReply =>
  failure(415, 'unsupported_media_type', error);

/** Errors of the body reader (raw-body via express.raw) and of Express itself, as JSON answers. */
export function replyForError(error: unknown, limit: number): WebhookReply {
  const fields = (typeof error === 'object' && error !== null ? error : {}) as {
    type?: unknown;
    status?: unknown;
  };
  switch (fields.type) {
    case 'entity.too.large':
      return payloadTooLarge(limit);
    case 'encoding.unsupported':
      return unsupportedMediaType(
        'the Content-Encoding is not supported; send the body as identity, gzip, deflate or br',
      );
    case 'request.aborted':
      return badRequest('the request was aborted before the body was complete');
    case 'request.size.invalid':
      return badRequest('the body is shorter or longer than its Content-Length');
  }
  const status = typeof fields.status === 'number' ? fields.status : 500;
  if (status >= 400 && status < 500) return failure(status, 'bad_request', 'the request could not be read');
  return REPLIES.internal;
}
