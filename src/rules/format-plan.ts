import { formatDuration } from '../base/duration.js';
import type { ConversationEvent } from '../events/conversation-event.js';
import type { Plan, PlannedAction } from './plan.js';

/**
 * The plan as `convo-bridge explain` prints it for people; `tags`, when the rules or the facts have
 * tags: the conversation's tags before the event and after its plan (rules/tags.ts).
 */
export function formatPlan(
  plan: Plan,
  event: ConversationEvent,
  now: Date,
  timezoneLabel: string,
  tags?: { before: readonly string[]; after: readonly string[] },
): string {
  const lines: string[] = [];
  const where = [event.channel.engine, event.channel.id].filter((v) => v !== null && v !== '').join(' ');
  lines.push(
    `event: ${event.kind} (${event.name}) in conversation ${event.conversationId ?? '(none)'}, channel ${where || '(unknown)'}`,
  );
  if (event.text !== '') lines.push(`text: ${JSON.stringify(truncate(event.text, 200))}`);
  lines.push(`now: ${now.toISOString()} (${timezoneLabel})`);
  if (tags) lines.push(`tags: ${tags.before.length > 0 ? tags.before.join(', ') : '(none)'}`);
  lines.push('');
  lines.push('rules:');
  const width = Math.min(32, Math.max(4, ...plan.outcomes.map((o) => o.rule.length)));
  for (const outcome of plan.outcomes) {
    const mark = outcome.status === 'matched' ? 'MATCH' : outcome.debounced ? 'burst' : 'no   ';
    lines.push(`  ${mark} ${outcome.rule.padEnd(width)}  ${outcome.reason}`);
    for (const note of outcome.notes) lines.push(`        ${' '.repeat(width)}  note: ${note}`);
  }
  lines.push('');
  if (plan.actions.length === 0) {
    lines.push('actions: none');
  } else {
    lines.push('actions, in order:');
    plan.actions.forEach((action, i) => {
      describeAction(action, `${i + 1}.`, '  ', lines);
    });
  }
  if (tags) {
    lines.push('');
    lines.push(`tags after the event: ${tags.after.length > 0 ? tags.after.join(', ') : '(none)'}`);
  }
  lines.push('');
  lines.push('(explain only plans: nothing was sent)');
  return `${lines.join('\n')}\n`;
}

export function describeAction(action: PlannedAction, number: string, indent: string, lines: string[]): void {
  const head = `${indent}${number} [${action.id}]`;
  switch (action.type) {
    case 'note':
      lines.push(`${head} note: ${JSON.stringify(action.text)}`);
      return;
    case 'need_human':
      lines.push(`${head} mark the conversation as needing a human`);
      return;
    case 'forward':
      lines.push(
        `${head} forward the event to destination "${action.destination}"${action.tags !== undefined ? ` with tags [${action.tags.join(', ')}]` : ''}`,
      );
      return;
    case 'tag':
      lines.push(
        `${head} tag the conversation: ${action.tags.join(', ')}${action.forMs !== null ? ` for ${formatDuration(action.forMs)}${action.expiresAt !== undefined ? ` (until ${action.expiresAt})` : ''}` : ''}`,
      );
      return;
    case 'untag':
      lines.push(`${head} untag the conversation: ${action.tags.join(', ')}`);
      return;
    case 'timer': {
      const unless = action.unless.length > 0 ? `, cancelled by ${action.unless.join(' or ')}` : '';
      const after =
        action.clock === 'business' && action.businessMs !== undefined
          ? `${formatDuration(action.businessMs)} of business hours`
          : formatDuration(action.delayMs);
      const due =
        action.dueLocal !== undefined
          ? ` (due ${action.dueLocal}${action.clock === 'business' ? `, in ${formatDuration(action.delayMs)}` : ''})`
          : '';
      const what = action.trigger === 'window_closing' ? 'window_closing timer' : 'timer';
      lines.push(`${head} ${what}: after ${after}${due}${unless}, run:`);
      action.actions.forEach((child, j) => {
        describeAction(child, `${number}${j + 1}.`, `${indent}   `, lines);
      });
      return;
    }
    case 'reply': {
      const what =
        'text' in action.message
          ? `reply text: ${JSON.stringify(action.message.text)}`
          : `reply ${action.message.media.type}: ${action.message.media.url}${action.message.media.caption !== undefined ? ` caption ${JSON.stringify(action.message.media.caption)}` : ''}`;
      lines.push(`${head} ${what}`);
      const extras: string[] = [];
      if (action.once) extras.push(`once per conversation per ${formatDuration(action.once.ttlMs)}`);
      if (action.replyToMessageId) extras.push(`in reply to ${action.replyToMessageId}`);
      if (action.window.applies) {
        extras.push(
          `${action.window.hours}h window of ${action.window.channelKind} closes ${action.window.closesAt ?? '(unknown)'}`,
        );
      }
      if (extras.length > 0) lines.push(`${indent}   ${extras.join('; ')}`);
      return;
    }
  }
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
