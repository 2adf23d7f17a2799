/**
 * A sliding-window-log rate limiter: a request is allowed when fewer than `limit` requests of the
 * same identity were allowed in the last `windowMs`. Exact (no burst at window edges), O(1) amortised
 * per request, and memory bounded by `limit` timestamps per identity. Rejected requests are not
 * counted, so a client that waits `retryAfterSeconds` gets through.
 */
export interface RateDecision {
  readonly allowed: boolean;
  /** Whole seconds until a slot frees up (at least 1) when not allowed; 0 when allowed. */
  readonly retryAfterSeconds: number;
}

interface Bucket {
  /** Timestamps of allowed requests, oldest first, as a ring of `limit` slots. */
  readonly stamps: number[];
  head: number;
  size: number;
  last: number;
}

/** Identities kept before idle ones are swept (bounds memory when many clients come and go). */
const SWEEP_AT = 10_000;

export class SlidingWindowLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly windowMs: number) {}

  check(identity: string, limit: number, nowMs: number): RateDecision {
    if (limit <= 0)
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(this.windowMs / 1000)) };
    let bucket = this.buckets.get(identity);
    if (!bucket || bucket.stamps.length !== limit) {
      if (this.buckets.size >= SWEEP_AT) this.sweep(nowMs);
      bucket = { stamps: new Array<number>(limit).fill(0), head: 0, size: 0, last: 0 };
      this.buckets.set(identity, bucket);
    }
    // Drop stamps that left the window.
    while (bucket.size > 0 && (bucket.stamps[bucket.head] ?? 0) <= nowMs - this.windowMs) {
      bucket.head = (bucket.head + 1) % limit;
      bucket.size -= 1;
    }
    if (bucket.size >= limit) {
      const oldest = bucket.stamps[bucket.head] ?? nowMs;
      const waitMs = oldest + this.windowMs - nowMs;
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
    }
    bucket.stamps[(bucket.head + bucket.size) % limit] = nowMs;
    bucket.size += 1;
    bucket.last = nowMs;
    return { allowed: true, retryAfterSeconds: 0 };
  }

  clear(): void {
    this.buckets.clear();
  }

  private sweep(nowMs: number): void {
    for (const [identity, bucket] of this.buckets) {
      if (bucket.last <= nowMs - this.windowMs) this.buckets.delete(identity);
    }
  }
}
