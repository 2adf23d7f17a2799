import { z } from 'zod';
import { listDiff } from '../base/list-diff.js';
import type { EventPlanSummary } from './backtest.js';
import { ActionSummarySchema } from './recorded-event.js';

/**
 * Golden runs: `backtest --save plan.jsonl` writes the new side of every event,
 * one JSON object per line; `backtest --expect plan.jsonl` compares a run with it, so a rules
 * repository can pin behaviour in CI. Events are matched by event key (and the instant they were
 * evaluated at, since a key can recur in a long recording).
 */
export const GoldenPlanSchema = z.object({
  seq: z.number().int().nonnegative(),
  eventKey: z.string().min(1),
  conversationId: z.string(),
  kind: z.string(),
  now: z.iso.datetime({ offset: true }),
  text: z.string().default(''),
  matched: z.array(z.string()),
  actions: z.array(ActionSummarySchema),
  blocked: z.array(z.string()).default([]),
});

export interface GoldenMismatch {
  seq: number;
  text: string;
  eventKey: string;
  conversationId: string;
  /** `- expected` / `+ actual` lines. */
  diff: string[];
}

function lines(p: Pick<EventPlanSummary, 'matched' | 'actions' | 'blocked'>): string[] {
  return [
    ...p.matched.map((rule) => `matched ${rule}`),
    ...p.actions.map((a) => `${a.type} [${a.id}]`),
    ...p.blocked.map((id) => `blocked ${id}`),
  ];
}

const keyOf = (p: { eventKey: string; now: string }) => `${p.eventKey}@${p.now}`;

/** Differences between saved plans and this run's; empty when they agree. */
export function compareGolden(
  expected: readonly EventPlanSummary[],
  actual: readonly EventPlanSummary[],
): GoldenMismatch[] {
  const mismatches: GoldenMismatch[] = [];
  const got = new Map(actual.map((p) => [keyOf(p), p]));
  const seen = new Set<string>();
  for (const want of expected) {
    const key = keyOf(want);
    seen.add(key);
    const have = got.get(key);
    if (!have) {
      mismatches.push({
        seq: want.seq,
        text: want.text,
        eventKey: want.eventKey,
        conversationId: want.conversationId,
        diff: ['- (this event is in the expected plans but not among the events backtested)'],
      });
      continue;
    }
    const a = lines(want);
    const b = lines(have);
    if (a.join('\n') !== b.join('\n')) {
      mismatches.push({
        seq: want.seq,
        text: want.text,
        eventKey: want.eventKey,
        conversationId: want.conversationId,
        diff: listDiff(a, b),
      });
    }
  }
  for (const have of actual) {
    if (!seen.has(keyOf(have))) {
      mismatches.push({
        seq: have.seq,
        text: have.text,
        eventKey: have.eventKey,
        conversationId: have.conversationId,
        diff: ['+ (this event was backtested but has no expected plan: --save again to pin it)'],
      });
    }
  }
  return mismatches;
}
