/**
 * An append-only log that keeps the newest `capacity` entries (a ring buffer). The request and
 * delivery logs use it so a long benchmark run cannot grow the emulator's memory without bound.
 */
export class BoundedLog<T> {
  readonly capacity: number;
  private readonly items: (T | undefined)[];
  private next = 0;
  private count = 0;
  /** How many entries were ever appended, including those already overwritten. */
  private appended = 0;

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`BoundedLog capacity must be a positive integer, got ${capacity}`);
    }
    this.capacity = capacity;
    this.items = new Array<T | undefined>(capacity);
  }

  push(item: T): void {
    this.items[this.next] = item;
    this.next = (this.next + 1) % this.capacity;
    if (this.count < this.capacity) this.count += 1;
    this.appended += 1;
  }

  get size(): number {
    return this.count;
  }

  get totalAppended(): number {
    return this.appended;
  }

  /** Entries oldest first; `limit` keeps only the newest `limit` of them. */
  toArray(limit = this.count): T[] {
    const take = Math.max(0, Math.min(limit, this.count));
    const out: T[] = [];
    const start = (this.next - take + this.capacity) % this.capacity;
    for (let i = 0; i < take; i += 1) {
      const item = this.items[(start + i) % this.capacity];
      if (item !== undefined) out.push(item);
    }
    return out;
  }

  clear(): void {
    this.items.fill(undefined);
    this.next = 0;
    this.count = 0;
    this.appended = 0;
  }
}
