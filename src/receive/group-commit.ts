import type { ConversationEvent } from '../events/conversation-event.js';
import type { IngestItem, IngestResult } from '../queue/ingest-event.js';

/** Largest batch: events, and their approximate JSON size (one job carries the whole batch). */
const MAX_BATCH_EVENTS = 64;
const MAX_BATCH_BYTES = 512 * 1024;

/** What a batch holds: events, or events with their business (a bridge of several). */
type Storable = ConversationEvent | IngestItem;

const eventOf = (item: Storable): ConversationEvent => ('event' in item ? item.event : item);

interface Pending<T extends Storable> {
  event: T;
  resolve: (result: IngestResult) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: events handed over while a batch is being stored wait for the next batch, and
 * each batch is stored with two round trips whatever its size (queue/ingest-event.ts). Idle, an
 * event is stored on the next turn of the event loop, so a lone webhook waits no longer than
 * before; under load, hundreds of webhooks per second share a few dozen batches. Each caller's
 * promise resolves only once its own batch is durable, and rejects with its batch's error. One
 * batch at a time: a redelivery can never race its original's batch within this process.
 */
export function createGroupCommit<T extends Storable = ConversationEvent>(
  store: (events: T[]) => Promise<IngestResult[]>,
): (event: T) => Promise<IngestResult> {
  const queue: Pending<T>[] = [];
  let busy = false;
  let scheduled = false;

  const take = (): Pending<T>[] => {
    let bytes = 0;
    let count = 0;
    while (count < queue.length && count < MAX_BATCH_EVENTS) {
      const next = eventOf((queue[count] as Pending<T>).event);
      bytes += 600 + next.text.length * 2 + next.caption.length * 2;
      if (count > 0 && bytes > MAX_BATCH_BYTES) break;
      count += 1;
    }
    return queue.splice(0, count);
  };

  const flush = async (): Promise<void> => {
    scheduled = false;
    if (busy || queue.length === 0) return;
    busy = true;
    const batch = take();
    try {
      const results = await store(batch.map((p) => p.event));
      batch.forEach((p, i) => {
        p.resolve(results[i] as IngestResult);
      });
    } catch (error) {
      for (const p of batch) p.reject(error);
    } finally {
      busy = false;
      if (queue.length > 0) schedule();
    }
  };

  function schedule() {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => void flush());
  }

  return (event) =>
    new Promise<IngestResult>((resolve, reject) => {
      queue.push({ event, resolve, reject });
      if (!busy) schedule();
    });
}
