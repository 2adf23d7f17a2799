import { describe, expect, it } from 'vitest';
import { belongsTo, stripBatch, stripReturnValue } from '../../../src/privacy/job-data.js';

const item = (conversationId: string, key: string, business?: string) => ({
  arrival: 1,
  ...(business ? { business } : {}),
  event: { key, conversationId, text: 'hi' },
});

describe('stripBatch', () => {
  const ref = { conversationId: 'c-1', tag: '' };

  it("removes the conversation's events, their results and failure counts, keeping the rest", () => {
    const data = {
      events: [item('c-1', 'k1'), item('c-2', 'k2'), item('c-1', 'k3')],
      finished: [
        { eventKey: 'k1', conversationId: 'c-1' },
        { eventKey: 'k2', conversationId: 'c-2' },
      ],
      failures: { k3: 2, k2: 1 },
      replay: 1,
    };
    expect(stripBatch(data, ref)).toEqual({
      eventKeys: ['k1', 'k3'],
      data: {
        events: [item('c-2', 'k2')],
        finished: [{ eventKey: 'k2', conversationId: 'c-2' }],
        failures: { k2: 1 },
        replay: 1,
      },
    });
  });

  it("says the job holds nothing else when every event is the conversation's", () => {
    expect(stripBatch({ events: [item('c-1', 'k1')] }, ref)).toEqual({ data: undefined, eventKeys: ['k1'] });
  });

  it("leaves other businesses' conversations of the same id alone (issue 26)", () => {
    const data = { events: [item('c-1', 'a:k1', 'a'), item('c-1', 'b:k1', 'b')] };
    expect(stripBatch(data, { conversationId: 'c-1', tag: 'a' })?.eventKeys).toEqual(['a:k1']);
    expect(stripBatch(data, ref)).toBeNull();
  });

  it.each([[null], ['text'], [{ events: 'x' }], [{ events: [{ nope: 1 }] }]])(
    'answers null for data it cannot read (%j)',
    (data) => {
      expect(stripBatch(data, ref)).toBeNull();
    },
  );
});

describe('belongsTo and stripReturnValue', () => {
  it('reads timers (conversationId at the top) and batched events', () => {
    expect(
      belongsTo(
        { conversationId: 'c-1', event: { conversationId: 'c-1' } },
        { conversationId: 'c-1', tag: '' },
      ),
    ).toBe(true);
    expect(belongsTo({ conversationId: 'c-1', business: 'b' }, { conversationId: 'c-1', tag: '' })).toBe(
      false,
    );
  });

  it('drops the results of the given events', () => {
    const value = { events: [{ eventKey: 'k1' }, { eventKey: 'k2' }], skipped: 0 };
    expect(stripReturnValue(value, new Set(['k1']))).toEqual({ events: [{ eventKey: 'k2' }], skipped: 0 });
    expect(stripReturnValue('x', new Set(['k1']))).toBe('x');
  });
});
