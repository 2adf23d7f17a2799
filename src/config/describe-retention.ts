import { formatDuration } from '../base/duration.js';
import type { RetentionSettings } from './config-schema.js';

/**
 * `retention:` in one line, as `validate` prints it (issue 27): how long each store keeps what it
 * holds.
 */
export function describeRetention(retention: RetentionSettings): string {
  const done =
    retention.doneEventsMs === 0 ? 'removed once done' : `kept ${formatDuration(retention.doneEventsMs)}`;
  const parts = [
    `done events ${done}`,
    `failed events ${formatDuration(retention.failedEventsMs)}`,
    `dead letters ${formatDuration(retention.deadLettersMs)}`,
    `quarantine ${formatDuration(retention.quarantineMs)}`,
    `conversations ${formatDuration(retention.conversationsMs)} after the last customer message`,
    `recorded events ${formatDuration(retention.recordedEventsMs)}`,
    `dedupe ${formatDuration(retention.dedupeMs)}`,
    `event stream ~${retention.eventStreamMaxLen} entries per queue`,
  ];
  return `retention: ${parts.join(', ')}`;
}
