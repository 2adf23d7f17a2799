import { describe, expect, it } from 'vitest';
import { ForwardError } from '../../../../src/forward/forward-event.js';
import { CallBudgetExhaustedError } from '../../../../src/worker/failures/call-budget.js';
import { classifyFailure } from '../../../../src/worker/failures/classify-failure.js';

const none = () => undefined;

describe('classifyFailure', () => {
  it('treats a retryable forward failure as transient and a 4xx as rejected', () => {
    const transient = new ForwardError('x', { destination: 'crm', status: 503, retryable: true });
    const rejected = new ForwardError('x', { destination: 'crm', status: 400, retryable: false });
    expect(classifyFailure(transient, none).kind).toBe('transient');
    expect(classifyFailure(rejected, none).kind).toBe('rejected');
  });

  it('treats an exhausted call budget as a short rate limit', () => {
    const failure = classifyFailure(new CallBudgetExhaustedError(100), none);
    expect(failure).toMatchObject({ kind: 'rate-limited', retryAfterMs: 1000 });
  });

  it('lets the platform classifier decide its own errors, and calls unknown errors transient', () => {
    const platform = (e: unknown) =>
      e === 'p' ? ({ kind: 'auth', code: 'AUTH', message: 'no' } as const) : undefined;
    expect(classifyFailure('p', platform).kind).toBe('auth');
    expect(classifyFailure(new Error('boom'), platform)).toMatchObject({
      kind: 'transient',
      code: 'UNEXPECTED',
    });
  });
});
