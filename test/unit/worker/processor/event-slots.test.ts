import { describe, expect, it } from 'vitest';
import { createEventSlots } from '../../../../src/worker/processor/event-slots.js';

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
