import { parseRetentionSettings, type RetentionSettings } from '../config/config-schema.js';

/**
 * The expiries the worker gives the keys it writes, in seconds, derived once from the config's
 * `retention:` section. Each is set on a key the run writes anyway (in the same script
 * or transaction), never by a command of its own per event.
 */
export interface StoreTtls {
  /**
   * The conversation hash (facts, once-marks, cooldowns, sent texts, timer registrations), from
   * its last customer message (`retention.conversations`); a pending timer's registration extends
   * it to past the timer's due time, and no later write shortens it (timers/timers.ts).
   */
  readonly conversationSeconds: number;
  /** A dead letter (`retention.dead_letters`). */
  readonly deadLetterSeconds: number;
  /**
   * The run state (frozen plan, action ledger) kept for a dead letter's replay: as long as the
   * dead letter and an hour more (it is given its expiry just after the dead letter is stored),
   * so that a replay never finds the ledger gone and repeats what was done.
   */
  readonly deadLetterRunSeconds: number;
  /**
   * The run state of a run that has not finished (its first durable write gives it this expiry;
   * the run's end deletes it): past every retry of its job. Not a retention setting: a finished
   * run keeps nothing, and a dead-lettered one gets `deadLetterRunSeconds`.
   */
  readonly unfinishedRunSeconds: number;
}

/** A run's job is retried for minutes to hours; 8 days is past any retry, pause and restart. */
const UNFINISHED_RUN_SECONDS = 8 * 24 * 3600;

/** How much longer than its dead letter a dead-lettered run's state is kept. */
const DEAD_LETTER_RUN_MARGIN_SECONDS = 3600;

export function storeTtls(retention: RetentionSettings): StoreTtls {
  const deadLetterSeconds = Math.ceil(retention.deadLettersMs / 1000);
  return {
    conversationSeconds: Math.ceil(retention.conversationsMs / 1000),
    deadLetterSeconds,
    deadLetterRunSeconds: deadLetterSeconds + DEAD_LETTER_RUN_MARGIN_SECONDS,
    unfinishedRunSeconds: UNFINISHED_RUN_SECONDS,
  };
}

/** The expiries of the schema's default `retention:` (code that writes without a config: tools, tests). */
export const DEFAULT_STORE_TTLS: StoreTtls = storeTtls(parseRetentionSettings());
