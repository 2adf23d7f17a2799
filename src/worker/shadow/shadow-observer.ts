import type { Logger } from 'pino';
import type { ConversationEvent } from '../../events/conversation-event.js';
import type { BridgeKeys } from '../../queue/redis-keys.js';
import type { RedisClient } from '../../redis/redis-client.js';
import type { CounterLike } from '../adapters/worker-metrics.js';
import type { ConversationFacts, Plan, RulesPort } from '../ports.js';
import { comparePlans } from './compare-plans.js';
import { hourOf, storeShadowCounts, storeShadowDifferences } from './shadow-store.js';

/**
 * Shadow rules in the worker: each live event's plan is made by the active rules and,
 * from the same facts at the same instant, by the candidate rules, which never act (their plan is
 * compared and dropped: no platform call, no forward, no timer, no state of their own). Where the
 * plans differ, the difference is counted in the metrics and kept (shadow-store.ts); the counts
 * of agreeing events are kept in memory and written once per flush period. Nothing here may slow
 * down or fail an event: the write is not awaited, and a failure (of the candidate or of Redis) is
 * logged at most once a minute and counted nowhere else.
 */

/** The candidate rules in force for a business, and how much of what they find is kept. */
export interface ShadowCandidate {
  readonly rules: RulesPort;
  /** shadow.examples: differences kept per rule. */
  readonly examples: number;
  /** shadow.max_age. */
  readonly maxAgeMs: number;
}

export interface ShadowObservation {
  event: ConversationEvent;
  /** The facts the active plan was made with (after any history was learnt). */
  facts: ConversationFacts;
  now: Date;
  /** The active plan, as first evaluated (it is only read). */
  plan: Plan;
}

export interface ShadowObserver {
  /** Whether shadow rules are on now (else `observe` does nothing, and the caller need not prepare its input). */
  enabled(): boolean;
  /** Called once per event, when its plan is first evaluated (not for a re-run of a frozen plan). */
  observe(observation: ShadowObservation): void;
  /** Writes the counts not written yet (the worker's close). */
  flush(): Promise<void>;
}

export interface ShadowMetrics {
  differences: CounterLike<'rule'>;
  events: CounterLike<never>;
}

export interface ShadowObserverDeps {
  redis: RedisClient;
  /** The business's keys of no conversation (layout.global). */
  keys: BridgeKeys;
  /** The candidate in force now; undefined while shadow rules are off (hot reload swaps it). */
  candidate: () => ShadowCandidate | undefined;
  metrics?: ShadowMetrics | undefined;
  log: Logger;
  /** How long counts wait in memory before they are written (default 5 s). */
  flushEveryMs?: number;
}

const WARN_EVERY_MS = 60_000;

export function createShadowObserver(deps: ShadowObserverDeps): ShadowObserver {
  const counts = new Map<number, Map<string, number>>();
  let timer: NodeJS.Timeout | undefined;
  let maxAgeMs = 7 * 86_400_000;
  const lastWarning = { candidate: 0, store: 0 };
  const warn = (what: keyof typeof lastWarning, error: unknown, message: string) => {
    if (Date.now() - lastWarning[what] < WARN_EVERY_MS) return;
    lastWarning[what] = Date.now();
    deps.log.warn({ err: String(error) }, message);
  };
  const add = (hour: number, field: string) => {
    let fields = counts.get(hour);
    if (fields === undefined) {
      fields = new Map();
      counts.set(hour, fields);
    }
    fields.set(field, (fields.get(field) ?? 0) + 1);
  };
  const flush = async (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const pending = [...counts];
    counts.clear();
    await Promise.all(
      pending.map(([hour, fields]) =>
        storeShadowCounts(deps.redis, deps.keys, hour, fields, maxAgeMs).catch((error: unknown) =>
          warn(
            'store',
            error,
            'could not write the shadow rules counts (shadow:); the events themselves ran',
          ),
        ),
      ),
    );
  };

  return {
    enabled: () => deps.candidate() !== undefined,
    observe({ event, facts, now, plan }) {
      const candidate = deps.candidate();
      if (candidate === undefined) return;
      maxAgeMs = candidate.maxAgeMs;
      let comparison: ReturnType<typeof comparePlans>;
      try {
        comparison = comparePlans(plan, candidate.rules.evaluate(event, facts, now));
      } catch (error) {
        warn(
          'candidate',
          error,
          'the shadow rules could not be evaluated for an event; the active rules ran as always',
        );
        return;
      }
      const hour = hourOf(now.getTime());
      add(hour, 'e');
      deps.metrics?.events.inc({});
      for (const rule of comparison.activeMatched) add(hour, `a|${rule}`);
      for (const rule of comparison.candidateMatched) add(hour, `c|${rule}`);
      if (comparison.activeMatched.length + comparison.candidateMatched.length > 0) {
        for (const rule of new Set([...comparison.activeMatched, ...comparison.candidateMatched])) {
          add(hour, `m|${rule}`);
        }
      }
      timer ??= setTimeout(() => void flush(), deps.flushEveryMs ?? 5_000).unref();
      if (comparison.differences.length === 0) return;
      for (const difference of comparison.differences)
        deps.metrics?.differences.inc({ rule: difference.rule });
      const at = { at: now, conversationId: event.conversationId, eventKey: event.key, kind: event.kind };
      storeShadowDifferences(deps.redis, deps.keys, at, comparison.differences, candidate).catch(
        (error: unknown) =>
          warn('store', error, 'could not keep a shadow rules difference (shadow:); the event itself ran'),
      );
    },
    flush,
  };
}
