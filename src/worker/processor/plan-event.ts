import type { ConversationEvent } from '../../events/conversation-event.js';
import { cooldownFields, factsForEvaluation, learnFromHistory, withHistory } from '../conversation-facts.js';
import type { ConversationFacts, FrozenPlan, Plan, PlannedAction, RulesPort } from '../ports.js';
import type { PreparedEvent } from './prepare-run.js';
import type { ProcessorPorts } from './processor-deps.js';

/**
 * An event's plan: evaluated once and frozen (a re-run uses the same plan, even if time or facts
 * moved on, so "exactly once" is about one fixed list of actions), reported to the metrics and the
 * recorder, and the cooldowns of the rules it matched staged for the conversation hash. When the
 * rules need the last customer message or the first message and the bridge does not know them,
 * they are learnt from the platform's history first: the facts learnt replace `prepared.facts`,
 * which the run then acts on.
 */
export async function planEvent(
  event: ConversationEvent,
  conversationId: string,
  prepared: PreparedEvent,
  rules: RulesPort,
  deps: ProcessorPorts,
): Promise<FrozenPlan> {
  let facts = prepared.facts;
  // What the plan was evaluated with, for the recorder and the shadow rules (undefined when a frozen
  // plan was read back, or neither is on).
  let evaluated: { now: Date; facts: ConversationFacts; blocked: string[] } | undefined;
  const evaluate = async (): Promise<Plan> => {
    const now = deps.clock.now();
    let planned = rules.evaluate(event, factsForEvaluation(facts, event), now);
    const needsHistory =
      (event.kind !== 'message_in' &&
        !facts.lastCustomerMessageAt &&
        planned.actions.some(dependsOnWindow)) ||
      (rules.usesFirstMessage &&
        event.kind === 'message_in' &&
        !facts.historyChecked &&
        facts.firstEventKey === event.key);
    if (needsHistory) {
      const learned = await learnFromHistory(
        deps.store.redis,
        deps.store.keys,
        conversationId,
        deps.actions.platform.history(conversationId),
        event.messageId,
        deps.store.ttls.conversationSeconds,
      );
      facts = withHistory(facts, learned, event.key);
      prepared.facts = facts;
      // Kept, so that a debounced rule judging first_message later knows it too.
      if (facts.firstEventKey === 'history') prepared.state.stageConversation('firstIn', 'history');
      planned = rules.evaluate(event, factsForEvaluation(facts, event), now);
    }
    if (deps.observe.recorder || deps.observe.shadow?.enabled()) {
      const blocked = planned.blockedReplies.map((b) => b.actionId);
      evaluated = { now, facts: factsForEvaluation(facts, event), blocked };
    }
    return planned;
  };

  // Evaluated once; a re-run reads the plan back instead of evaluating again. It is staged with
  // the run's state and written with its first durable write (before the first outside call that
  // needs one). Only the actions and the matched rules are kept: serialising every rule's outcome
  // would cost O(rules) per event (see evaluate-rules.ts).
  let plan: FrozenPlan;
  const stored = prepared.state.storedPlan;
  if (stored) plan = JSON.parse(stored) as FrozenPlan;
  else if (prepared.ownSend) plan = { actions: [], matched: [] };
  else {
    const planned = await evaluate();
    plan = {
      actions: planned.actions,
      matched: planned.matched.map((m) => ({ rule: m.rule, cooldownMs: m.cooldownMs })),
    };
    if (plan.actions.length > 0) prepared.state.stagePlan(JSON.stringify(plan));
    deps.observe.onPlanFrozen?.(planned);
    prepared.evaluated = planned;
    // Shadow rules: the candidate's plan from the same facts, compared, never acted on.
    if (evaluated)
      deps.observe.shadow?.observe({ event, facts: evaluated.facts, now: evaluated.now, plan: planned });
  }

  deps.observe.onPlan?.(plan, event.kind);
  if (evaluated) deps.observe.recorder?.record({ event, plan, ...evaluated });
  for (const [field, value] of Object.entries(cooldownFields(plan, deps.clock.now()))) {
    prepared.state.stageConversation(field, value);
  }
  return plan;
}

/**
 * A planned action whose presence depends on the reply window: a windowed reply, or the
 * when_closed actions the evaluator put in a reply's place because it knew no customer message
 * (ids `<reply id>~closed.<n>`). Either way the last customer message must be known, from history
 * if need be, before the plan is frozen.
 */
function dependsOnWindow(action: PlannedAction): boolean {
  return (action.type === 'reply' && action.window.applies) || action.id.includes('~closed.');
}
