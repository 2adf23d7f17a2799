import type { ConversationEvent } from '../events/conversation-event.js';
import type { ResolvedEventInput } from '../record/event-input.js';
import { type BurstRun, planBursts } from '../rules/burst-plan.js';
import type { CompiledRules } from '../rules/compile-rules.js';
import type { ConversationFacts } from '../rules/plan.js';
import { CliError } from './cli-error.js';

/**
 * `explain` with debounced rules. Several `--event` files are customer messages of one
 * conversation; each debounced rule groups them into bursts by the time each was received (a
 * canonical event's `receivedAt`; a webhook body's own timestamp) and is evaluated on each burst
 * when it ends. One message is a burst of one: what the rule would do if nothing followed.
 */
export function burstMessages(
  inputs: readonly { path: string; input: ResolvedEventInput }[],
): ConversationEvent[] {
  const messages = inputs.map(({ input }) =>
    input.source === 'webhook' ? { ...input.event, receivedAt: input.event.occurredAt } : input.event,
  );
  if (inputs.length < 2) return messages;
  const first = inputs[0]?.input.event;
  for (const { path, input } of inputs) {
    if (input.event.kind !== 'message_in') {
      throw new CliError(
        `${path} is ${input.event.kind}: several --event files are one burst of customer messages (message_in); explain other events one at a time`,
      );
    }
    if (input.event.conversationId !== first?.conversationId) {
      throw new CliError(
        `${path} is in conversation ${input.event.conversationId ?? '(none)'}, the first --event in ${first?.conversationId ?? '(none)'}: several --event files are customer messages of one conversation`,
      );
    }
  }
  return messages
    .map((message, order) => ({ message, order }))
    .sort((a, b) => Date.parse(a.message.receivedAt) - Date.parse(b.message.receivedAt) || a.order - b.order)
    .map(({ message }) => message);
}

/** The debounced rules' bursts of the messages (none when no rule is debounced or no message is a customer's). */
export function explainBursts(
  rules: CompiledRules,
  messages: readonly ConversationEvent[],
  facts: ConversationFacts,
): BurstRun[] {
  if (rules.bursts.length === 0 || messages.some((m) => m.kind !== 'message_in')) return [];
  return planBursts(rules, messages, facts);
}
