import { describe, expect, it } from 'vitest';
import { BusinessGate } from '../../../../src/worker/processor/business-gate.js';
import { createEventSlots, GAVE_UP } from '../../../../src/worker/processor/event-slots.js';

describe('createEventSlots', () => {
  it('never runs more tasks at once than it has slots, and runs them all', async () => {
    const slots = createEventSlots(3);
    let running = 0;
    let peak = 0;
    const gates: (() => void)[] = [];
    const tasks = Array.from({ length: 10 }, (_, i) =>
      slots.run(async () => {
        running += 1;
        peak = Math.max(peak, running);
        await new Promise<void>((resolve) => gates.push(resolve));
        running -= 1;
        return i;
      }),
    );
    while (gates.length > 0 || running > 0) {
      await new Promise((resolve) => setImmediate(resolve));
      gates.shift()?.();
    }
    expect(await Promise.all(tasks)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(peak).toBe(3);
  });

  it('frees the slot of a task that throws', async () => {
    const slots = createEventSlots(1);
    await expect(slots.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await slots.run(async () => 'next')).toBe('next');
  });
});

/** Tasks that run until released by hand, per business, to look at who gets the slots. */
function harness(size: number, gates: Record<string, BusinessGate>) {
  const slots = createEventSlots(size);
  const running: Record<string, number> = {};
  const releases: Record<string, (() => void)[]> = {};
  const started: string[] = [];
  const outcomes: Promise<unknown>[] = [];
  const submit = (business: string) => {
    const gate = gates[business] as BusinessGate;
    outcomes.push(
      slots.run(async () => {
        started.push(business);
        running[business] = (running[business] ?? 0) + 1;
        const list = releases[business] ?? [];
        releases[business] = list;
        await new Promise<void>((resolve) => list.push(resolve));
        running[business] = (running[business] ?? 1) - 1;
        return business;
      }, gate),
    );
  };
  const release = async (business: string) => {
    releases[business]?.shift()?.();
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { submit, release, running, started, outcomes };
}

describe('createEventSlots with businesses (fair share, issue 26)', () => {
  it('lets a lone business use slots past its share, up to its ceiling (a quarter stays free)', async () => {
    const gates = { a: new BusinessGate('a', 4, 8) };
    const h = harness(8, gates);
    for (let i = 0; i < 10; i++) h.submit('a');
    expect(h.running.a).toBe(6);
    expect(gates.a.running).toBe(6);
    // A freed slot goes to its next event, and the two reserved slots stay free.
    await h.release('a');
    expect(h.running.a).toBe(6);
    expect(h.started).toHaveLength(7);
  });

  it('gives a freed slot to the business running the fewest, and holds a business at its share while another waits', async () => {
    const gates = { a: new BusinessGate('a', 2, 4), b: new BusinessGate('b', 2, 4) };
    const h = harness(4, gates);
    for (let i = 0; i < 4; i++) h.submit('a');
    for (let i = 0; i < 3; i++) h.submit('b');
    // a took 3 (alone past its share of 2, up to its ceiling 3) and one of its events waits; b got
    // the last slot and two of its events wait.
    expect(h.running).toEqual({ a: 3, b: 1 });
    await h.release('a');
    // The freed slot goes to b (running fewer), although a's event waited first.
    expect(h.running).toEqual({ a: 2, b: 2 });
    await h.release('a');
    // Now a runs fewer: its waiting event gets the slot, and b stays at its share while a waits.
    expect(h.running).toEqual({ a: 2, b: 2 });
    expect(h.started).toEqual(['a', 'a', 'a', 'b', 'b', 'a']);
  });

  it('never leaves a slot idle while events wait: past their shares, the business running fewest gets it', async () => {
    const gates = {
      a: new BusinessGate('a', 1, 4),
      b: new BusinessGate('b', 1, 4),
      c: new BusinessGate('c', 1, 4),
    };
    const h = harness(4, gates);
    h.submit('c');
    h.submit('c'); // alone: past its share
    h.submit('a');
    h.submit('a'); // no one below its share waits: past its share too
    h.submit('b'); // waits
    h.submit('a'); // waits
    h.submit('b'); // waits
    expect(h.running).toEqual({ c: 2, a: 2 });
    await h.release('c');
    // b is below its share: it gets the slot.
    expect(h.running).toEqual({ c: 1, a: 2, b: 1 });
    await h.release('c');
    // Every waiting business is at or past its share: the slot goes to the one running fewest (b).
    expect(h.running).toEqual({ c: 0, a: 2, b: 2 });
  });

  it('makes the waiting events of a stalled business give up, so that their jobs park', async () => {
    const gate = new BusinessGate('a', 1, 2);
    const slots = createEventSlots(2);
    const hang = new Promise<void>(() => {});
    void slots.run(() => hang, gate);
    void slots.run(() => hang, gate);
    const waiting = slots.run(async () => 'ran', gate);
    // No event of a finished for longer than STALLED_AFTER_MS: the waiter gives up.
    expect(await waiting).toBe(GAVE_UP);
    expect(gate.isStalled()).toBe(true);
  });
});
