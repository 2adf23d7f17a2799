import { formatWib } from '../base/wib-time.js';
import type { ActiveFault } from '../emulator/faults.js';
import type { EmulatorHandle } from '../emulator/start-emulator.js';
import type { CrmSink } from './crm-sink.js';
import { DemoError } from './demo-error.js';
import { DEMO_CONVERSATIONS, type DemoConversation, type DemoStep } from './demo-script.js';

const WEBHOOK_EVENTS = {
  customer: 'channel.message_in',
  ai: 'ai.message_generated',
  agent: 'agent.message_out',
};

function conversationOf(id: string): DemoConversation {
  const conversation = DEMO_CONVERSATIONS.find((c) => c.id === id);
  if (!conversation)
    throw new DemoError('DEMO_SCRIPT_INVALID', `the script names an unknown conversation ${id}`);
  return conversation;
}

/** One line of the demo's progress: the simulated time and what the step does. */
export function describeStep(step: DemoStep, simNow: Date): string {
  const time = formatWib(simNow).slice(5, 16);
  switch (step.kind) {
    case 'customer': {
      const c = conversationOf(step.conversation);
      return `${time} ${c.channelLabel} · ${c.label}: "${step.text}"`;
    }
    case 'ai':
      return `${time} AI → ${conversationOf(step.conversation).label}: "${step.text}"`;
    case 'agent':
      return `${time} ${step.agent} takes over ${conversationOf(step.conversation).label}: "${step.text}"`;
    case 'redeliver':
      return `platform redelivers ${WEBHOOK_EVENTS[step.event]} of ${conversationOf(step.conversation).label}`;
    case 'fault':
      return `fault armed: ${step.what}`;
    case 'crm-hiccup':
      return `the CRM will answer the next ${step.count} forward(s) with 503`;
  }
}

/**
 * Plays one step of the script through the emulator's admin API (or the CRM sink). An armed fault
 * is named in `faultNames` (for the report); one that always fires goes to `certainFaults`.
 */
export function playStep(
  step: DemoStep,
  emulator: EmulatorHandle,
  crm: CrmSink,
  faultNames: Map<string, string>,
  certainFaults: ActiveFault[],
): void {
  const admin = emulator.admin;
  switch (step.kind) {
    case 'customer':
      admin.customerMessage(step.conversation, {
        text: step.text,
        senderName: conversationOf(step.conversation).label,
      });
      return;
    case 'ai':
      admin.aiReply(step.conversation, step.text);
      return;
    case 'agent':
      admin.takeOver(step.conversation, step.agent);
      admin.agentReply(step.conversation, step.text, step.agent);
      return;
    case 'redeliver': {
      const event = WEBHOOK_EVENTS[step.event];
      const original = admin
        .deliveries()
        .filter((d) => d.conversationId === step.conversation && d.event === event && d.redeliveryOf === null)
        .at(-1);
      if (!original) {
        throw new DemoError(
          'DEMO_SCRIPT_INVALID',
          `no ${event} delivery of ${step.conversation} to redeliver`,
        );
      }
      admin.redeliver(original.id);
      return;
    }
    case 'fault': {
      const fault = admin.addFault(step.spec);
      faultNames.set(fault.id, step.what);
      if (fault.fraction === 1) certainFaults.push(fault);
      return;
    }
    case 'crm-hiccup':
      crm.failNext(step.count);
      return;
  }
}
