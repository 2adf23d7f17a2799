import { setTimeout as sleep } from 'node:timers/promises';
import { describeError } from '../base/errors.js';
import { EmulatorError } from './emulator-error.js';
import type { WebhookPayload } from './webhook-payload.js';

export interface WebhookTarget {
  readonly url: string;
  readonly secret: string;
}

export type DeliveryState = 'queued' | 'delivering' | 'delivered' | 'failed' | 'skipped';

export interface DeliveryAttempt {
  readonly attempt: number;
  /** ISO-8601 time the attempt started. */
  readonly at: string;
  readonly outcome: 'success' | 'failure';
  /** HTTP status of the answer; null when there was none (connection refused, timeout). */
  readonly httpStatus: number | null;
  /** The answer's body (first 2,000 characters); null when there was none. */
  readonly body: string | null;
  /** Why the attempt failed; null on success. */
  readonly error: string | null;
  readonly durationMs: number;
}

export interface DeliveryRecord {
  readonly id: string;
  readonly event: string;
  readonly conversationId: string;
  readonly payload: WebhookPayload;
  state: DeliveryState;
  readonly attempts: DeliveryAttempt[];
  readonly createdAt: string;
  finishedAt: string | null;
  /** Set on a redelivery: the id of the delivery it repeats. */
  readonly redeliveryOf: string | null;
  /** Why a delivery was skipped or given up without attempts. */
  reason: string | null;
}

/** One row of the flat delivery log. */
export interface DeliveryLogEntry extends DeliveryAttempt {
  readonly deliveryId: string;
  readonly event: string;
  readonly conversationId: string;
}

/** One failed webhook attempt, as the emulator reports it. */
/** A failed attempt as the dispatcher sees it (it knows no business). */
export interface DeliveryFailure {
  deliveryId: string;
  event: string;
  conversationId: string;
  url: string;
  attempt: number;
  maxAttempts: number;
  /** Why: "ECONNREFUSED", "HTTP 404: ...", "the answer is not a JSON body with success: true". */
  error: string;
  /** Milliseconds until the next attempt; null when this was the last one (the delivery failed). */
  retryInMs: number | null;
}

/** A failed webhook attempt as `onWebhookFailure` is told it: with the business whose webhook it was. */
export interface WebhookFailure extends DeliveryFailure {
  businessId: string;
}

export interface WebhookDispatcherOptions {
  /** Read before every attempt, so the target can change at run time. */
  readonly target: () => WebhookTarget | undefined;
  /** Delays before attempts 2, 3 and 4. */
  readonly retryDelaysMs: readonly number[];
  /** Per-attempt timeout. */
  readonly timeoutMs: number;
  /** Deliveries kept for inspection (oldest finished ones are dropped first). */
  readonly logSize: number;
  /** Told about every failed attempt, so a person running the emulator sees it. */
  readonly onFailure?: ((failure: DeliveryFailure) => void) | undefined;
}

/** The spec's limit: at most 4 attempts. */
export const MAX_WEBHOOK_ATTEMPTS = 4;
const BODY_KEEP = 2000;
/** How far eviction looks for a finished delivery to drop before giving up (bounds the work per enqueue). */
const EVICT_SCAN = 64;

/**
 * Sends webhook events to the configured receiver (messaging-service-interface.md, "Events"):
 * the secret in `Authorization`, success only when the answer is a JSON body with `success: true`
 * (the HTTP status is ignored), at most 4 attempts with configurable delays, every attempt
 * recorded. Deliveries of one conversation go out one after another, in order; conversations do
 * not wait for each other, and nothing here blocks the API (enqueue returns at once).
 */
export class WebhookDispatcher {
  private readonly records = new Map<string, DeliveryRecord>();
  private readonly queues = new Map<string, DeliveryRecord[]>();
  private readonly pumps = new Set<Promise<void>>();
  private abort = new AbortController();
  private counter = 0;
  private closed = false;

  constructor(private readonly options: WebhookDispatcherOptions) {}

  /** Queues a delivery and returns at once. */
  enqueue(payload: WebhookPayload, redeliveryOf: string | null = null): DeliveryRecord {
    this.counter += 1;
    const record: DeliveryRecord = {
      id: `dlv-${this.counter}`,
      event: payload.event,
      conversationId: payload.conversation_id,
      payload,
      state: 'queued',
      attempts: [],
      createdAt: new Date().toISOString(),
      finishedAt: null,
      redeliveryOf,
      reason: null,
    };
    this.remember(record);
    if (this.closed) return this.finish(record, 'skipped', 'the emulator is closing');
    if (this.options.target() === undefined)
      return this.finish(record, 'skipped', 'no webhook URL is configured');
    const queue = this.queues.get(record.conversationId);
    if (queue) {
      queue.push(record);
    } else {
      this.queues.set(record.conversationId, [record]);
      this.startPump(record.conversationId);
    }
    return record;
  }

  /** Sends a delivery's payload again as a new delivery (a redelivery, as the platform would). */
  redeliver(id: string): DeliveryRecord {
    const original = this.records.get(id);
    if (!original) {
      throw new EmulatorError(
        'EMULATOR_NOT_FOUND',
        `delivery ${JSON.stringify(id)} does not exist: list deliveries with GET /_emulator/deliveries`,
      );
    }
    return this.enqueue(original.payload, original.id);
  }

  get(id: string): DeliveryRecord | undefined {
    return this.records.get(id);
  }

  list(): DeliveryRecord[] {
    return [...this.records.values()];
  }

  /** Every attempt, oldest delivery first. */
  log(): DeliveryLogEntry[] {
    const rows: DeliveryLogEntry[] = [];
    for (const record of this.records.values()) {
      for (const attempt of record.attempts) {
        rows.push({
          deliveryId: record.id,
          event: record.event,
          conversationId: record.conversationId,
          ...attempt,
        });
      }
    }
    return rows;
  }

  /** Resolves when no delivery is queued or in flight. */
  async idle(): Promise<void> {
    while (this.pumps.size > 0) await Promise.allSettled([...this.pumps]);
  }

  /** Forgets every delivery and stops those in flight (admin reset). */
  async clear(): Promise<void> {
    this.abort.abort();
    await this.idle();
    this.records.clear();
    this.queues.clear();
    this.abort = new AbortController();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.abort.abort();
    await this.idle();
  }

  private remember(record: DeliveryRecord): void {
    this.records.set(record.id, record);
    if (this.records.size <= this.options.logSize) return;
    let scanned = 0;
    for (const [id, candidate] of this.records) {
      if (scanned >= EVICT_SCAN) break;
      scanned += 1;
      if (candidate.finishedAt !== null) {
        this.records.delete(id);
        return;
      }
    }
  }

  private finish(record: DeliveryRecord, state: DeliveryState, reason: string | null): DeliveryRecord {
    record.state = state;
    record.reason = reason;
    record.finishedAt = new Date().toISOString();
    return record;
  }

  private startPump(conversationId: string): void {
    const pump = this.pump(conversationId).finally(() => {
      this.pumps.delete(pump);
    });
    this.pumps.add(pump);
  }

  /** Delivers one conversation's queue in order until it is empty. */
  private async pump(conversationId: string): Promise<void> {
    const signal = this.abort.signal;
    for (;;) {
      const queue = this.queues.get(conversationId);
      const record = queue?.[0];
      if (!queue || !record) {
        this.queues.delete(conversationId);
        return;
      }
      await this.deliver(record, signal);
      queue.shift();
    }
  }

  private async deliver(record: DeliveryRecord, signal: AbortSignal): Promise<void> {
    record.state = 'delivering';
    for (let attempt = 1; attempt <= MAX_WEBHOOK_ATTEMPTS; attempt += 1) {
      if (attempt > 1) {
        const delay = this.options.retryDelaysMs[attempt - 2] ?? this.options.retryDelaysMs.at(-1) ?? 0;
        try {
          await sleep(delay, undefined, { signal });
        } catch {
          this.finish(record, 'failed', 'stopped: the emulator was reset or closed');
          return;
        }
      }
      if (signal.aborted) {
        this.finish(record, 'failed', 'stopped: the emulator was reset or closed');
        return;
      }
      const target = this.options.target();
      if (!target) {
        this.finish(record, 'skipped', 'no webhook URL is configured');
        return;
      }
      const result = await this.attempt(record, attempt, target, signal);
      record.attempts.push(result);
      if (result.outcome === 'success') {
        this.finish(record, 'delivered', null);
        return;
      }
      const last = attempt === MAX_WEBHOOK_ATTEMPTS;
      this.options.onFailure?.({
        deliveryId: record.id,
        event: record.event,
        conversationId: record.conversationId,
        url: target.url,
        attempt,
        maxAttempts: MAX_WEBHOOK_ATTEMPTS,
        error:
          result.httpStatus === null
            ? (result.error ?? 'no answer')
            : `HTTP ${result.httpStatus}: ${result.error ?? 'not a success'}`,
        retryInMs: last
          ? null
          : (this.options.retryDelaysMs[attempt - 1] ?? this.options.retryDelaysMs.at(-1) ?? 0),
      });
    }
    this.finish(record, 'failed', `no success after ${MAX_WEBHOOK_ATTEMPTS} attempts`);
  }

  private async attempt(
    record: DeliveryRecord,
    attempt: number,
    target: WebhookTarget,
    signal: AbortSignal,
  ): Promise<DeliveryAttempt> {
    const started = Date.now();
    const at = new Date(started).toISOString();
    try {
      const response = await fetch(target.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          // The interface puts the secret itself in Authorization (webhook-payloads.md §1, newer docs).
          authorization: target.secret,
          'user-agent': 'convo-bridge-emulator',
        },
        body: JSON.stringify(record.payload),
        signal: AbortSignal.any([signal, AbortSignal.timeout(this.options.timeoutMs)]),
      });
      const text = await response.text();
      const body = text.slice(0, BODY_KEEP);
      const ok = answersSuccess(text);
      return {
        attempt,
        at,
        outcome: ok ? 'success' : 'failure',
        httpStatus: response.status,
        body,
        error: ok ? null : 'the answer is not a JSON body with "success": true',
        durationMs: Date.now() - started,
      };
    } catch (error) {
      return {
        attempt,
        at,
        outcome: 'failure',
        httpStatus: null,
        body: null,
        error: describeFetchError(error),
        durationMs: Date.now() - started,
      };
    }
  }
}

/** Spec, "Events" rule 2: the receiver answers a JSON body holding `success` true; the status is ignored. */
export function answersSuccess(text: string): boolean {
  try {
    const parsed: unknown = JSON.parse(text);
    return (
      typeof parsed === 'object' && parsed !== null && (parsed as { success?: unknown }).success === true
    );
  } catch {
    return false;
  }
}

/** fetch() reports "fetch failed" and keeps the reason (ECONNREFUSED, a timeout) in `cause`. */
function describeFetchError(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined;
  return cause === undefined ? describeError(error) : `${describeError(error)}: ${describeError(cause)}`;
}
