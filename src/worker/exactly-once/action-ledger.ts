import { z } from 'zod';
import type { SendChain } from '../conversation-facts.js';

/**
 * The action ledger: one record per (event, action) kept in Redis, written BEFORE and AFTER every
 * call to the outside world. It is what turns BullMQ's at-least-once job execution into
 * exactly-once effects. This file is the record's form; the moves between its states are the
 * steps of an action's life (action-life.ts, which draws them).
 *
 * When a run finds `started`, the previous attempt may or may not have reached the platform, so
 * the action is reconciled against the conversation's history before anything is sent again.
 * When the same text was sent into the conversation moments before (see sent-marks.ts),
 * `chain` says how many of them there were since when (when all are known to have reached the
 * platform), or `after` is the highest history id when the call began: either way reconciliation
 * cannot take an earlier message for this one.
 */
export const LEDGER_STATES = ['started', 'done', 'retry', 'failed', 'skipped'] as const;
export type LedgerState = (typeof LEDGER_STATES)[number];

export const LedgerEntrySchema = z.object({
  state: z.enum(LEDGER_STATES),
  /** When the state was written (ms since epoch). For `started`: when the call began. */
  at: z.number(),
  /** How many times the action was begun (1 on the first call). */
  tries: z.number().int().nonnegative(),
  /** Why it was skipped or failed, or what it produced (message id, "reconciled"). */
  detail: z.string().optional(),
  /** For `started`: history messages with an id up to this one existed before the call began. */
  after: z.number().int().nonnegative().optional(),
  /**
   * For `started`: the same text's earlier sends, all known to have reached the platform, in a run
   * that began at `since` (ms): that many of its messages from then on are not this action's.
   */
  chain: z.object({ since: z.number().int().positive(), count: z.number().int().positive() }).optional(),
});
export type LedgerEntry = z.infer<typeof LedgerEntrySchema>;

/** What a run must do with an action, given its ledger entry. */
export type LedgerDecision =
  | { kind: 'run' } // never begun, or provably not sent: call the platform
  | { kind: 'reconcile'; startedAt: number; after?: number; chain?: SendChain } // outcome unknown: look at history first
  | { kind: 'finished'; state: 'done' | 'failed' | 'skipped' }; // nothing to do

/** What rules out a same-text message sent moments before this call (see sent-marks.ts). */
export interface CollisionGuard {
  after?: number;
  chain?: SendChain;
}

/** Parses a stored entry; a corrupt value is treated as `started` (reconcile: the safe reading). */
export function parseLedgerEntry(raw: string | null | undefined): LedgerEntry | undefined {
  if (raw === null || raw === undefined) return undefined;
  try {
    const parsed = LedgerEntrySchema.safeParse(JSON.parse(raw));
    if (parsed.success) return parsed.data;
  } catch {
    // fall through
  }
  return { state: 'started', at: 0, tries: 1, detail: 'unreadable ledger entry' };
}

// The ledger's state machine, pure: the action's life (action-life.ts) asks it at each step.

/** What a run must do with an action, given its ledger entry. */
export function decide(entry: LedgerEntry | undefined): LedgerDecision {
  if (!entry) return { kind: 'run' };
  switch (entry.state) {
    case 'retry':
      return { kind: 'run' };
    case 'started': {
      const decision: LedgerDecision = { kind: 'reconcile', startedAt: entry.at };
      if (entry.after !== undefined) decision.after = entry.after;
      if (entry.chain !== undefined) decision.chain = entry.chain;
      return decision;
    }
    case 'done':
    case 'failed':
    case 'skipped':
      return { kind: 'finished', state: entry.state };
  }
}

/** The `started` entry written before a call, with what rules out a same-text collision. */
export function begin(
  previous: LedgerEntry | undefined,
  now: number,
  guard: CollisionGuard = {},
): LedgerEntry {
  const entry: LedgerEntry = { state: 'started', at: now, tries: (previous?.tries ?? 0) + 1 };
  if (guard.after !== undefined) entry.after = guard.after;
  if (guard.chain !== undefined) entry.chain = guard.chain;
  return entry;
}

/** The ledger entry an action ends with (its tries carried over). */
export function ended(
  previous: LedgerEntry | undefined,
  state: Exclude<LedgerState, 'started'>,
  now: number,
  detail?: string,
): LedgerEntry {
  const entry: LedgerEntry = { state, at: now, tries: previous?.tries ?? 0 };
  if (detail !== undefined) entry.detail = detail;
  return entry;
}
