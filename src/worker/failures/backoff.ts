/**
 * Capped exponential backoff with full jitter (AWS architecture blog, "Exponential Backoff And
 * Jitter"): delay = random(0, min(cap, base * 2^(attempt-1))). Used by BullMQ's custom backoff for
 * the long tail of retries; the platform client's p-retry loop owns the short horizon.
 */
export function fullJitterDelay(
  attempt: number,
  baseMs: number,
  capMs: number,
  random = Math.random,
): number {
  const exponent = Math.max(0, Math.min(attempt - 1, 30));
  const ceiling = Math.min(capMs, baseMs * 2 ** exponent);
  return Math.floor(random() * ceiling);
}

/** Backoff that never returns less than a floor (so a retry storm cannot form at jitter 0). */
export function jobRetryDelay(attempt: number, baseMs: number, capMs: number, random = Math.random): number {
  return Math.max(Math.floor(baseMs / 2), fullJitterDelay(attempt, baseMs, capMs, random));
}
