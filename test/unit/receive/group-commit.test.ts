import { describe, expect, it } from 'vitest';
import type { ConversationEvent } from '../../../src/events/conversation-event.js';
import type { IngestResult } from '../../../src/queue/ingest-event.js';
import { createGroupCommit } from '../../../src/receive/group-commit.js';
import { makeEvent } from '../../support/make-event.js';

/** A store that records each batch and resolves it when told to. */
function controlledStore() {
  const batches: ConversationEvent[][] = [];
  const pending: { resolve: () => void; reject: (error: Error) => void }[] = [];
  const store = (events: ConversationEvent[]) => {
    batches.push(events);
    return new Promise<IngestResult[]>((resolve, reject) => {
      pending.push({
        resolve: () =>
          resolve(events.map((_, i) => ({ outcome: 'queued', jobId: `b${batches.length}`, arrival: i + 1 }))),
        reject,
      });
    });
  };
  return { store, batches, pending };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('createGroupCommit (the receiver group commit)', () => {
  it('stores the events handed over in one turn of the event loop as one batch', async () => {
    const { store, batches, pending } = controlledStore();
    const ingest = createGroupCommit(store);
    const results = [1, 2, 3].map(() => ingest(makeEvent()));
    await tick();
    expect(batches.map((b) => b.length)).toEqual([3]);
    pending[0]?.resolve();
    expect((await Promise.all(results)).map((r) => r.jobId)).toEqual(['b1', 'b1', 'b1']);
  });

  it('keeps events that arrive while a batch is being stored for the next batch, one batch at a time', async () => {
    const { store, batches, pending } = controlledStore();
    const ingest = createGroupCommit(store);
    const first = ingest(makeEvent());
    await tick();
    const later = [ingest(makeEvent()), ingest(makeEvent())];
    await tick();
    // Nothing else is stored while the first batch is in flight.
    expect(batches.map((b) => b.length)).toEqual([1]);
    pending[0]?.resolve();
    expect((await first).jobId).toBe('b1');
    await tick();
    expect(batches.map((b) => b.length)).toEqual([1, 2]);
    pending[1]?.resolve();
    expect((await Promise.all(later)).map((r) => r.jobId)).toEqual(['b2', 'b2']);
  });

  it('answers every caller of a failed batch with its error, and goes on with the next batch', async () => {
    const { store, batches, pending } = controlledStore();
    const ingest = createGroupCommit(store);
    const doomed = [ingest(makeEvent()), ingest(makeEvent())];
    await tick();
    const next = ingest(makeEvent());
    pending[0]?.reject(new Error('Redis is down'));
    for (const result of doomed) await expect(result).rejects.toThrow('Redis is down');
    await tick();
    expect(batches).toHaveLength(2);
    pending[1]?.resolve();
    expect((await next).outcome).toBe('queued');
  });

  it('caps a batch at 64 events and stores the rest in the following ones', async () => {
    const { store, batches, pending } = controlledStore();
    const ingest = createGroupCommit(store);
    const all = Array.from({ length: 150 }, () => ingest(makeEvent()));
    for (let i = 0; i < 3; i++) {
      await tick();
      pending[i]?.resolve();
      await tick();
    }
    await Promise.all(all);
    expect(batches.map((b) => b.length)).toEqual([64, 64, 22]);
  });

  it('caps a batch by size: large texts go in smaller batches', async () => {
    const { store, batches, pending } = controlledStore();
    const ingest = createGroupCommit(store);
    const big = 'x'.repeat(100_000);
    const all = Array.from({ length: 6 }, () => ingest(makeEvent({ text: big })));
    for (let i = 0; i < 6 && batches.length < 6; i++) {
      await tick();
      pending[i]?.resolve();
      await tick();
    }
    await Promise.all(all);
    expect(Math.max(...batches.map((b) => b.length))).toBeLessThan(6);
    expect(batches.flat()).toHaveLength(6);
  });
});
