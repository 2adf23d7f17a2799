import type { ConversationEvent } from '../events/conversation-event.js';
import { type BurstRun, combineBurstPlans, planBursts } from '../rules/burst-plan.js';
import type { CompiledRules } from '../rules/compile-rules.js';
import type { ConversationFacts, Plan } from '../rules/plan.js';
import type { CheckFailure } from './check-plan.js';
import type { Expect, RuleTestCase } from './rules-test-schema.js';

/**
 * A rule test case with `burst:`: its event, once per listed message with that text,
 * received at that time (message ids `<id>-1`, `<id>-2`...). The case's plan is what the
 * debounced rules do when each burst ends (burst-plan.ts), in the order they end. Null when the
 * case has no burst; a string when it cannot be run (said as the case's error).
 */
export function planBurstCase(
  testCase: RuleTestCase,
  event: ConversationEvent,
  rules: CompiledRules,
  facts: ConversationFacts,
): { plan: Plan; runs: BurstRun[] } | string | null {
  const listed = testCase.burst;
  if (listed === undefined) return null;
  if (event.kind !== 'message_in') {
    return `burst: lists customer messages, but the case's event is ${event.kind}: give a customer message (message_in) as the event`;
  }
  if (rules.bursts.length === 0) {
    return 'burst: the rules under test have no debounced rule (debounce: DURATION on a message_in rule)';
  }
  const base = event.messageId ?? 'burst';
  const messages = listed.map((m, i): ConversationEvent => {
    const messageId = `${base}-${i + 1}`;
    const at = new Date(m.at).toISOString();
    return {
      ...event,
      messageId,
      key: `${event.name}|${messageId}`,
      text: m.text,
      caption: '',
      occurredAt: at,
      receivedAt: at,
    };
  });
  const runs = planBursts(rules, messages, facts);
  return { plan: combineBurstPlans(runs), runs };
}

/** `expect.bursts`: the sizes of the bursts evaluated, in the order they end. */
export function checkBursts(expect: Expect, runs: readonly BurstRun[] | undefined): CheckFailure[] {
  if (expect.bursts === undefined) return [];
  const sizes = (runs ?? []).map((run) => run.burst.count);
  if (sizes.length === expect.bursts.length && sizes.every((n, i) => n === expect.bursts?.[i])) return [];
  const show = (list: readonly number[], by: string) =>
    list.length === 0 ? [`${by} (no burst)`] : [`${by} ${list.map((n) => `${n} message(s)`).join(', ')}`];
  return [
    {
      check: 'bursts (messages per burst, in the order they end)',
      diff: [...show(expect.bursts, '-'), ...show(sizes, '+')],
    },
  ];
}
