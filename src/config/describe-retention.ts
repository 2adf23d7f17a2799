import { formatDuration } from '../base/duration.js';
import type { RetentionSettings } from './config-schema.js';

/** A retention as it would be written: `30d`, `72h`, `90s`; anything else as formatDuration says it. */
export function formatKeptFor(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1_000],
  ] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return formatDuration(ms);
}

/**
 * `retention:` in one line, as `validate` prints it: how long each store keeps what it
 * holds.
 */
export function describeRetention(retention: RetentionSettings): string {
  const done =
    retention.doneEventsMs === 0 ? 'removed once done' : `kept ${formatKeptFor(retention.doneEventsMs)}`;
  const parts = [
    `done events ${done}`,
    `failed events ${formatKeptFor(retention.failedEventsMs)}`,
    `dead letters ${formatKeptFor(retention.deadLettersMs)}`,
    `quarantine ${formatKeptFor(retention.quarantineMs)}`,
    `conversations ${formatKeptFor(retention.conversationsMs)} after the last customer message`,
    `recorded events ${formatKeptFor(retention.recordedEventsMs)}`,
    `dedupe ${formatKeptFor(retention.dedupeMs)}`,
    `event stream ~${retention.eventStreamMaxLen} entries per queue`,
  ];
  return `retention: ${parts.join(', ')}`;
}
