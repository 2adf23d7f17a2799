import type { CompiledCondition, CompiledRules } from '../rules/compile-rules.js';
import { evaluateRules } from '../rules/evaluate-rules.js';
import { replyWindow } from '../rules/reply-window.js';
import type { RulesPort } from './ports.js';

function usesFirstMessage(condition: CompiledCondition | null): boolean {
  if (!condition) return false;
  switch (condition.type) {
    case 'all':
    case 'any':
      return condition.items.some(usesFirstMessage);
    case 'not':
      return usesFirstMessage(condition.item);
    case 'flag':
      return condition.flag === 'first_message';
    default:
      return false;
  }
}

/** The compiled rules seen through the worker's port. */
export function rulesPort(rules: CompiledRules): RulesPort {
  return {
    evaluate: (event, facts, now) => evaluateRules(rules, event, facts, now),
    replyWindow: (channel, lastCustomerMessageAt, now) => {
      const state = replyWindow(rules, channel, lastCustomerMessageAt, now);
      return {
        applies: state.applies,
        open: state.open,
        closesAt: state.closesAt ? new Date(state.closesAt) : null,
      };
    },
    usesFirstMessage: rules.rules.some((rule) => usesFirstMessage(rule.condition)),
  };
}
