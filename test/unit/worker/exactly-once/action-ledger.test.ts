import { describe, expect, it } from 'vitest';
import {
  begin,
  decide,
  ended,
  type LedgerEntry,
  parseLedgerEntry,
} from '../../../../src/worker/exactly-once/action-ledger.js';

describe('action ledger state machine', () => {
  it.each<[string, LedgerEntry | undefined, ReturnType<typeof decide>]>([
    ['never begun -> run', undefined, { kind: 'run' }],
    ['provably not sent -> run again', { state: 'retry', at: 5, tries: 1 }, { kind: 'run' }],
    [
      'begun, outcome unknown -> reconcile first',
      { state: 'started', at: 42, tries: 1 },
      { kind: 'reconcile', startedAt: 42 },
    ],
    [
      'begun after a same-text message, outcome unknown -> reconcile above that history id',
      { state: 'started', at: 42, tries: 1, after: 17 },
      { kind: 'reconcile', startedAt: 42, after: 17 },
    ],
    ['done -> nothing', { state: 'done', at: 1, tries: 1 }, { kind: 'finished', state: 'done' }],
    [
      'failed for good -> nothing',
      { state: 'failed', at: 1, tries: 1 },
      { kind: 'finished', state: 'failed' },
    ],
    ['skipped -> nothing', { state: 'skipped', at: 1, tries: 0 }, { kind: 'finished', state: 'skipped' }],
  ])('%s', (_name, entry, expected) => {
    expect(decide(entry)).toEqual(expected);
  });

  it('counts tries across begins and keeps them when finishing', () => {
    const first = begin(undefined, 100);
    expect(first).toEqual({ state: 'started', at: 100, tries: 1 });
    const notSent = ended(first, 'retry', 110, 'RATE_LIMITED');
    const second = begin(notSent, 200);
    expect(second.tries).toBe(2);
    expect(ended(second, 'done', 210, 'message m1')).toEqual({
      state: 'done',
      at: 210,
      tries: 2,
      detail: 'message m1',
    });
  });

  it('keeps the history floor only on the started entry that needs it', () => {
    const started = begin(undefined, 100, { after: 17 });
    expect(started).toEqual({ state: 'started', at: 100, tries: 1, after: 17 });
    expect(parseLedgerEntry(JSON.stringify(started))).toEqual(started);
    expect(ended(started, 'done', 110)).toEqual({ state: 'done', at: 110, tries: 1 });
    expect(begin(undefined, 100)).not.toHaveProperty('after');
  });

  it("keeps the run of the text's earlier sends on the started entry, and reconciliation gets it", () => {
    const chain = { since: 40, count: 2 };
    const started = begin(undefined, 100, { chain });
    expect(started).toEqual({ state: 'started', at: 100, tries: 1, chain });
    const read = parseLedgerEntry(JSON.stringify(started));
    expect(read).toEqual(started);
    expect(decide(read)).toEqual({ kind: 'reconcile', startedAt: 100, chain });
    expect(ended(started, 'done', 110)).not.toHaveProperty('chain');
  });

  it.each([
    ['not JSON', '{oops'],
    ['wrong shape', '{"state":"weird","at":1,"tries":1}'],
    ['missing fields', '{"state":"done"}'],
  ])(
    'reads a corrupt entry (%s) as started, so the action is reconciled rather than repeated blindly',
    (_n, raw) => {
      const entry = parseLedgerEntry(raw);
      expect(entry?.state).toBe('started');
      expect(decide(entry).kind).toBe('reconcile');
    },
  );

  it('reads an absent entry as never begun', () => {
    expect(parseLedgerEntry(null)).toBeUndefined();
  });
});

describe('action ledger edges', () => {
  it('finishes an action that was never begun (a skip) with no tries and no detail', () => {
    expect(ended(undefined, 'skipped', 300)).toEqual({ state: 'skipped', at: 300, tries: 0 });
    expect(ended(undefined, 'skipped', 300, 'window closed')).toEqual({
      state: 'skipped',
      at: 300,
      tries: 0,
      detail: 'window closed',
    });
  });

  it('begins again after a crash (started) with one more try, and drops the old guard', () => {
    const crashed = begin(undefined, 100, { after: 17, chain: { since: 40, count: 2 } });
    expect(begin(crashed, 200)).toEqual({ state: 'started', at: 200, tries: 2 });
  });

  it('reads an absent entry (null or undefined) as never begun', () => {
    expect(parseLedgerEntry(undefined)).toBeUndefined();
    expect(parseLedgerEntry(null)).toBeUndefined();
  });

  it('reads a corrupt entry as begun once at the epoch, and says so', () => {
    expect(parseLedgerEntry('{oops')).toEqual({
      state: 'started',
      at: 0,
      tries: 1,
      detail: 'unreadable ledger entry',
    });
    expect(decide(parseLedgerEntry('"done"'))).toEqual({ kind: 'reconcile', startedAt: 0 });
  });

  it('keeps both guards for reconciliation when a started entry has both', () => {
    const chain = { since: 40, count: 1 };
    expect(decide({ state: 'started', at: 9, tries: 1, after: 3, chain })).toEqual({
      kind: 'reconcile',
      startedAt: 9,
      after: 3,
      chain,
    });
    expect(decide({ state: 'started', at: 9, tries: 1, after: 0 })).toEqual({
      kind: 'reconcile',
      startedAt: 9,
      after: 0,
    });
  });
});

describe('action ledger entries carry no empty keys', () => {
  // A key set to undefined would be written to Redis as a stored field of its own shape, and
  // exactOptionalPropertyTypes readers tell "absent" from "undefined".
  it('leaves out the guards and the detail that were not given', () => {
    expect(Object.keys(decide({ state: 'started', at: 9, tries: 1 }))).toEqual(['kind', 'startedAt']);
    expect(Object.keys(begin(undefined, 100, { after: 3 }))).toEqual(['state', 'at', 'tries', 'after']);
    expect(Object.keys(begin(undefined, 100, {}))).toEqual(['state', 'at', 'tries']);
    expect(Object.keys(ended(undefined, 'done', 100))).toEqual(['state', 'at', 'tries']);
  });
});
