import { createHash } from 'node:crypto';
import got, { HTTPError, RequestError } from 'got';
import pRetry, { AbortError } from 'p-retry';
import { Webhook } from 'standardwebhooks';
import { ConvoBridgeError } from '../base/errors.js';
import type { ConversationEvent } from '../events/conversation-event.js';
import { activeTracing } from '../observe/trace-context.js';
import { installFastNativeOptions } from '../platform/got-native-options.js';
import { type ForwardBody, selectForwardFields } from './forward-body.js';

/**
 * Forwards events to a business's own endpoint (a CRM), signed the Standard Webhooks way
 * (https://www.standardwebhooks.com): headers `webhook-id`, `webhook-timestamp` and
 * `webhook-signature: v1,<base64 HMAC-SHA256(secret, "<id>.<timestamp>.<body>")>`, the secret
 * used as raw bytes. `webhook-id` is stable per (event, action), so a receiver that dedupes on it
 * sees each forward once even when we retry after an unknown outcome.
 *
 * Retries: a short p-retry loop for network errors, 5xx and 429; 4xx other than 429 are final.
 * The worker's BullMQ attempts own the long tail.
 */
installFastNativeOptions();

export interface DestinationOptions {
  url: string;
  /** Signing secret; null sends the forward unsigned (the `webhook-id` header is still set). */
  secret: string | null;
  timeoutMs?: number;
  retries?: number;
  /** The event's fields this destination receives (`destinations.NAME.fields`); null or unset: all. */
  fields?: readonly (keyof ConversationEvent)[] | null;
}

export class ForwardError extends ConvoBridgeError {
  readonly destination: string;
  readonly status: number | null;
  /** False for answers that retrying cannot change (4xx other than 408/429). */
  readonly retryable: boolean;

  constructor(
    message: string,
    options: { destination: string; status: number | null; retryable: boolean; cause?: unknown },
  ) {
    super(message, { code: 'FORWARD_FAILED', cause: options.cause });
    this.destination = options.destination;
    this.status = options.status;
    this.retryable = options.retryable;
  }
}

export function webhookIdFor(idempotencyKey: string): string {
  return `msg_${createHash('sha256').update(idempotencyKey).digest('base64url').slice(0, 32)}`;
}

export interface Forwarder {
  forward(destination: string, body: ForwardBody, idempotencyKey: string): Promise<{ status: number }>;
}

export function createForwarder(
  destinations: Record<string, DestinationOptions>,
  options: { minDelayMs?: number; maxDelayMs?: number } = {},
): Forwarder {
  const signers = new Map(
    Object.entries(destinations).map(([name, d]) => [
      name,
      d.secret === null ? null : new Webhook(d.secret, { format: 'raw' }),
    ]),
  );
  return {
    async forward(destination, body, idempotencyKey) {
      const target = destinations[destination];
      const signer = signers.get(destination);
      if (!target || signer === undefined) {
        throw new ForwardError(
          `unknown destination "${destination}": add it under destinations: in the config`,
          {
            destination,
            status: null,
            retryable: false,
          },
        );
      }
      const payload = JSON.stringify(selectForwardFields(body, target.fields ?? null));
      const id = webhookIdFor(idempotencyKey);
      const attempt = async (attemptNumber: number) => {
        const timestamp = new Date();
        const span = activeTracing()?.forwardCall(destination, {
          method: 'POST',
          url: target.url,
          attempt: attemptNumber,
        });
        try {
          const response = await got.post(target.url, {
            body: payload,
            headers: {
              'content-type': 'application/json',
              'user-agent': 'convo-bridge',
              'webhook-id': id,
              'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
              ...(signer ? { 'webhook-signature': signer.sign(id, timestamp, payload) } : {}),
            },
            timeout: { request: target.timeoutMs ?? 10_000 },
            retry: { limit: 0 },
            throwHttpErrors: true,
          });
          span?.annotate({ statusCode: response.statusCode });
          return { status: response.statusCode };
        } catch (error) {
          const status = error instanceof HTTPError ? error.response.statusCode : null;
          span?.annotate({
            statusCode: status,
            errorType:
              status === null ? (error instanceof RequestError ? error.code : 'network') : String(status),
          });
          const retryable = status === null || status >= 500 || status === 429 || status === 408;
          const failure = new ForwardError(
            status === null
              ? `forward to "${destination}" (${new URL(target.url).origin}) failed: ${
                  error instanceof RequestError ? error.code : 'request error'
                }`
              : `forward to "${destination}" (${new URL(target.url).origin}) answered HTTP ${status}`,
            { destination, status, retryable, cause: error },
          );
          if (!retryable) throw new AbortError(failure);
          throw failure;
        } finally {
          span?.end();
        }
      };
      try {
        return await pRetry(attempt, {
          retries: target.retries ?? 2,
          minTimeout: options.minDelayMs ?? 200,
          maxTimeout: options.maxDelayMs ?? 2_000,
          randomize: true,
        });
      } catch (error) {
        if (error instanceof ForwardError) throw error;
        throw new ForwardError(`forward to "${destination}" failed`, {
          destination,
          status: null,
          retryable: true,
          cause: error,
        });
      }
    },
  };
}
