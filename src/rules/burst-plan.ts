import type { ConversationEvent } from '../events/conversation-event.js';
import { type Burst, type BurstSettings, groupBursts, messageTime } from './burst.js';
import type { CompiledRules } from './compile-rules.js';
import { evaluateBurstRule } from './evaluate-rules.js';
import type { ConversationFacts, Plan } from './plan.js';
import { applyTagChange, type TagChange } from './tags.js';

/** One burst of a debounced rule, evaluated when it ends. */
export interface BurstRun {
  rule: string;
  settings: BurstSettings;
  burst: Burst;
  /** ISO instant the burst ends and the rule is evaluated. */
  dueAt: string;
  /** What ended it ("quiet for 2s", "max_wait 10s after it began"). */
  end: string;
  plan: Plan;
}

/**
 * What the debounced rules do with a series of customer messages of one conversation (explain,
 * rule tests; pure): each rule groups the messages into bursts (burst.ts groupBursts) and is
 * evaluated on each when it ends, in the order they end, as the worker would. `facts` describe the
 * conversation before the first message; once-marks and cooldowns set by an earlier burst hold for
 * the later ones; the last customer message is the latest one received by the burst's end.
 */
export function planBursts(
  rules: CompiledRules,
  messages: readonly ConversationEvent[],
  facts: ConversationFacts,
): BurstRun[] {
  const ends: { index: number; settings: BurstSettings; grouped: ReturnType<typeof groupBursts>[number] }[] =
    [];
  for (const index of rules.bursts) {
    const settings = rules.rules[index]?.burst;
    if (!settings) continue;
    for (const grouped of groupBursts(messages, settings)) ends.push({ index, settings, grouped });
  }
  ends.sort((a, b) => a.grouped.dueAt - b.grouped.dueAt || a.index - b.index);
  const onceMarks = { ...facts.onceMarks };
  const cooldowns = { ...(facts.cooldowns ?? {}) };
  const tags = new Map<string, number | null>(Object.entries(facts.tags ?? {}));
  const runs: BurstRun[] = [];
  for (const { index, settings, grouped } of ends) {
    const rule = rules.rules[index];
    if (!rule) continue;
    const { burst, dueAt } = grouped;
    const at = new Date(dueAt);
    let lastIn = facts.lastCustomerMessageAt?.getTime() ?? Number.NEGATIVE_INFINITY;
    for (const message of messages) {
      if (messageTime(message) <= dueAt) lastIn = Math.max(lastIn, Date.parse(message.occurredAt));
    }
    const plan = evaluateBurstRule(
      rules,
      rule,
      burst,
      {
        lastCustomerMessageAt: Number.isFinite(lastIn) ? new Date(lastIn) : null,
        isFirstCustomerMessage: facts.isFirstCustomerMessage && burst.firstEventKey === messages[0]?.key,
        onceMarks: { ...onceMarks },
        cooldowns: { ...cooldowns },
        tags: Object.fromEntries(tags),
      },
      at,
    );
    for (const action of plan.actions) {
      if (action.type === 'reply' && action.once !== null) onceMarks[action.once.key] = at.toISOString();
      if (action.type === 'tag' || action.type === 'untag') applyTagChange(tags, action as TagChange, dueAt);
    }
    for (const matched of plan.matched) {
      if (matched.cooldownMs !== null) cooldowns[matched.rule] = at.toISOString();
    }
    runs.push({ rule: rule.name, settings, burst, dueAt: at.toISOString(), end: grouped.end, plan });
  }
  return runs;
}

/** The runs' plans as one: their actions and matched rules in the order the bursts end. */
export function combineBurstPlans(runs: readonly BurstRun[]): Plan {
  return {
    actions: runs.flatMap((run) => run.plan.actions),
    matched: runs.flatMap((run) => run.plan.matched),
    blockedReplies: runs.flatMap((run) => run.plan.blockedReplies),
    outcomes: runs.flatMap((run) => run.plan.outcomes),
  };
}
