import { parseWib } from '../base/wib-time.js';

const AGE = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})$/;

/**
 * A point in time as the admin API and seed files take it: epoch milliseconds, an ISO-8601 string
 * with a zone (`2026-01-05T03:00:00Z`), a WIB wall-clock string (`2026-01-05 10:00:00`), or an age
 * relative to now (`25h`, `90m`, `30s`, `2d`). Returns undefined when it is none of these.
 */
export function parseMoment(value: string | number, nowMs: number): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value : undefined;
  const text = value.trim();
  const age = AGE.exec(text);
  if (age) return nowMs - Number(age[1]) * (UNIT_MS[age[2] ?? ''] ?? 0);
  if (ISO_WITH_ZONE.test(text)) {
    const ms = Date.parse(text);
    return Number.isNaN(ms) ? undefined : ms;
  }
  return parseWib(text)?.getTime();
}

export const MOMENT_HINT =
  'use epoch milliseconds, an ISO time with a zone (2026-01-05T03:00:00Z), WIB "YYYY-MM-DD HH:MM:SS", or an age such as "25h"';
