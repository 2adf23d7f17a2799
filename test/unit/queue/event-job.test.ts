import { describe, expect, it } from 'vitest';
import { businessNaming, jobNameOf, SINGLE_BUSINESS_NAMING } from '../../../src/events/business-naming.js';
import { batchJobName } from '../../../src/queue/event-job.js';

/** The job names bull-board shows: which business a job belongs to (issue 26). */
describe('job names', () => {
  it('names a batch by its businesses, at most three, and a batch of no business as before', () => {
    expect(batchJobName(new Set())).toBe('events');
    expect(batchJobName(new Set(['toko-b', 'toko-a']))).toBe('events:toko-a,toko-b');
    expect(batchJobName(new Set(['d', 'c', 'b', 'a', 'e']))).toBe('events:a,b,c,+2');
  });

  it('names a timer by its business, and a timer of no business as before', () => {
    expect(jobNameOf('timer', SINGLE_BUSINESS_NAMING)).toBe('timer');
    expect(jobNameOf('timer', businessNaming('toko-a', false))).toBe('timer:toko-a');
    // A business that takes over the single business's data names its jobs as that business did.
    expect(jobNameOf('timer', businessNaming('toko-a', true))).toBe('timer');
  });
});
