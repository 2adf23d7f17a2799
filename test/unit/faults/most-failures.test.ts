import { describe, expect, it } from 'vitest';
import { mostFailures } from '../../faults/support/fault-world.js';
import { makeEvent } from '../../support/make-event.js';

const batch = (failures?: Record<string, number>) =>
  JSON.stringify({ events: [{ arrival: 1, event: makeEvent() }], ...(failures ? { failures } : {}) });

describe('mostFailures (row 4 worst case, read from a batch job)', () => {
  it('is the most failed runs of one event, 0 when none failed', () => {
    expect(mostFailures('b-1', batch({ 'e-1': 3, 'e-2': 7 }))).toBe(7);
    expect(mostFailures('b-1', batch())).toBe(0);
  });

  // A misread job used to count as 0 failed runs, which once hid how close the row came to its
  // attempts: every unreadable form is an error naming the job.
  it.each([
    ['no data field', null, /job b-9 has no data field/],
    ['data that is not JSON', '{"events": [', /job b-9: its data is not JSON/],
    ['data that is not a batch', '{"event": {}}', /job b-9: its data is not an events batch \(events:/],
    ['failures that are not counts', batch({ 'e-1': -1 }), /not an events batch \(failures/],
  ])('throws on %s', (_case, data, message) => {
    expect(() => mostFailures('b-9', data)).toThrow(message);
  });
});
