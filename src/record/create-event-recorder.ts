import type { Logger } from 'pino';
import type { BridgeConfig } from '../config/config-schema.js';
import type { BridgeKeys } from '../queue/redis-keys.js';
import type { RedisClient } from '../redis/redis-client.js';
import type { EventRecorder } from '../worker/ports.js';
import { type StoreLimits, storeRecordedEvent } from './event-store.js';
import { factsToJson, summarizePlan } from './recorded-event.js';
import { redactEvent, redactedFields } from './redact-event.js';

/** The `record:` section and how long recorded events are kept (`retention.recorded_events`). */
export type RecorderSettings = BridgeConfig['record'] & StoreLimits;

/**
 * The worker's recorder port over RedisClient: one script call per event (event-store.ts), not awaited
 * by the run. A failed write is logged (at most once a minute) and counted, never retried: a
 * recording is an aid, it must not slow down or fail an event.
 */
export function createEventRecorder(
  redis: RedisClient,
  keys: BridgeKeys,
  settings: RecorderSettings,
  log: Logger,
  onFailure?: () => void,
): EventRecorder {
  const redacted = redactedFields(settings.redact);
  let lastWarning = 0;
  return {
    record({ event, facts, now, plan, blocked }) {
      const line = {
        v: 1 as const,
        now: now.toISOString(),
        event: redactEvent(event, settings.redact),
        facts: factsToJson(facts),
        plan: summarizePlan({
          matched: plan.matched,
          actions: plan.actions,
          blockedReplies: blocked.map((actionId) => ({ actionId })),
        }),
        redacted,
      };
      storeRecordedEvent(redis, keys, line, settings).catch((error: unknown) => {
        onFailure?.();
        if (Date.now() - lastWarning < 60_000) return;
        lastWarning = Date.now();
        log.warn({ err: String(error) }, 'could not record an event (record.enabled); the event itself ran');
      });
    },
  };
}
