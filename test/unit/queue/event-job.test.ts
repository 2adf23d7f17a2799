import { describe, expect, it } from 'vitest';
import { batchJobName, jobNameFor } from '../../../src/queue/event-job.js';

/** The job names bull-board shows: which business a job belongs to (issue 26). */
describe('job names', () => {
  it('names a batch by its businesses, at most three, and a batch of no business as before', () => {
    expect(batchJobName(new Set())).toBe('events');
    expect(batchJobName(new Set(['toko-b', 'toko-a']))).toBe('events:toko-a,toko-b');
    expect(batchJobName(new Set(['d', 'c', 'b', 'a', 'e']))).toBe('events:a,b,c,+2');
  });

  it('names a timer by its business, and a timer of no business as before', () => {
    expect(jobNameFor('timer', null)).toBe('timer');
    expect(jobNameFor('timer', 'toko-a')).toBe('timer:toko-a');
  });
});
