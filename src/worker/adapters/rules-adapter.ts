import type { ConversationEvent } from '../../events/conversation-event.js';
import type { CompiledCondition, CompiledRules } from '../../rules/compile-rules.js';
import type { DefaultChannelKind } from '../../rules/default-channel-kind.js';
import { evaluateBurstRule, evaluateRules } from '../../rules/evaluate-rules.js';
import { replyWindow, resolveChannelKind } from '../../rules/reply-window.js';
import type { RulesPort } from '../ports.js';

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

export interface RulesPortOptions {
  /**
   * Called for each event whose channel has no `channels:` entry and whose kind is only assumed
   * from its engine (WhatsApp `wa`/`whatsapp`: API or QR link?). The caller logs it once per channel.
   */
  onAssumedChannel?: (channel: ConversationEvent['channel'], assumed: DefaultChannelKind) => void;
}

/** The compiled rules seen through the worker's port. */
export function rulesPort(rules: CompiledRules, options: RulesPortOptions = {}): RulesPort {
  const { onAssumedChannel } = options;
  return {
    evaluate: (event, facts, now) => {
      if (onAssumedChannel) {
        const resolved = resolveChannelKind(rules, event.channel);
        if (resolved.source === 'default' && resolved.kind !== null && resolved.assumption !== null) {
          onAssumedChannel(event.channel, { kind: resolved.kind, assumption: resolved.assumption });
        }
      }
      return evaluateRules(rules, event, facts, now);
    },
    replyWindow: (channel, lastCustomerMessageAt, now) => {
      const state = replyWindow(rules, channel, lastCustomerMessageAt, now);
      return {
        applies: state.applies,
        open: state.open,
        closesAt: state.closesAt ? new Date(state.closesAt) : null,
      };
    },
    usesFirstMessage: rules.rules.some((rule) => usesFirstMessage(rule.condition)),
    bursts: rules.rules.flatMap((rule) => (rule.burst ? [{ rule: rule.name, settings: rule.burst }] : [])),
    evaluateBurst: (name, burst, facts, now) => {
      const rule = rules.rules.find((r) => r.name === name && r.burst !== null);
      return rule ? evaluateBurstRule(rules, rule, burst, facts, now) : null;
    },
  };
}
