import type { PlannedAction } from '../ports.js';
import { begin } from './action-ledger.js';
import type { ExecutionContext } from './execution-context.js';
import { replyWindowVerdict } from './reply-window-verdict.js';
import { markOnce } from './sent-marks.js';
import { forwardTags, performTagAction } from './tag-actions.js';

export async function replySkipReason(
  action: Extract<PlannedAction, { type: 'reply' }>,
  ctx: ExecutionContext,
): Promise<{ reason: string; windowClosed: boolean } | undefined> {
  const { facts, event } = ctx.run;
  const now = ctx.clock.now();
  if (action.once) {
    const last = facts.onceMarks[action.once.key];
    if (last && now.getTime() - Date.parse(last) < action.once.ttlMs) {
      return { reason: `once_per_conversation: already sent at ${last}`, windowClosed: false };
    }
  }
  const window = ctx.run.rules.replyWindow(event.channel, facts.lastCustomerMessageAt, now);
  const verdict = replyWindowVerdict(window, now, ctx.clock.settings.safetyMarginMs);
  if (!verdict.send) {
    const last = facts.lastCustomerMessageAt?.toISOString() ?? 'unknown';
    const why =
      verdict.reason === 'margin' ? 'about to close' : verdict.reason === 'unknown' ? 'unknown' : 'closed';
    return { reason: `reply window ${why} (last customer message ${last})`, windowClosed: true };
  }
  return undefined;
}

export async function perform(action: PlannedAction, ctx: ExecutionContext): Promise<string | undefined> {
  const { conversationId, event, facts, state, scope } = ctx.run;
  const { platform, forwarder, timers } = ctx.actions;
  const now = ctx.clock.now;
  switch (action.type) {
    case 'note': {
      const result = await platform.addNote(conversationId, action.text);
      return result.messageId ? `message ${result.messageId}` : undefined;
    }
    case 'need_human':
      await platform.markNeedHuman(conversationId);
      return undefined;
    case 'reply': {
      const at = now();
      const verdict = replyWindowVerdict(
        ctx.run.rules.replyWindow(event.channel, facts.lastCustomerMessageAt, at),
        at,
        ctx.clock.settings.safetyMarginMs,
      );
      // Closed since the check a moment ago: the client's guard refuses it (handled as window-closed).
      // Judged by the worker's clock, the one the verdict used (a guard on the system clock
      // refused sends the worker's shifted test clock had found in time).
      const guard = verdict.send
        ? verdict.guardUntil
          ? { windowClosesAt: verdict.guardUntil, now }
          : undefined
        : { windowClosesAt: at, now };
      // The earlier form requires `text` with media too; the current form ignores text when media
      // is present, so the caption (or name, or URL) goes along in both.
      const input =
        'text' in action.message
          ? { conversationId, text: action.message.text }
          : {
              conversationId,
              media: action.message.media,
              text: action.message.media.caption ?? action.message.media.name ?? action.message.media.url,
            };
      const result = await platform.sendMessage(
        action.replyToMessageId ? { ...input, replyToMessageId: action.replyToMessageId } : input,
        guard,
      );
      if (action.once) markOnce(ctx, action.once.key, now());
      return result.messageId ? `message ${result.messageId}` : undefined;
    }
    case 'forward': {
      const body = {
        type: 'convo_bridge.event' as const,
        rule: action.rule,
        action: action.id,
        event,
        tags: forwardTags(action, ctx),
      };
      const result = await forwarder.forward(action.destination, body, `${scope}|${action.id}`);
      return `HTTP ${result.status}`;
    }
    case 'tag':
    case 'untag':
      return performTagAction(action, ctx);
    case 'timer': {
      const timerId = timers.idFor(scope, action.id);
      // Done jobs are not kept (retention.done_events), so the job id alone does not stop
      // a repeat from setting a timer that already fired: `started` is recorded once the timer is
      // registered, and a run that finds it (an earlier run was cut off) keeps a registration but
      // never makes a new one: no registration means the timer fired or was cancelled since.
      const previous = state.ledger.get(action.id);
      const outcome = await timers.schedule({
        timerId,
        conversationId,
        delayMs: action.delayMs,
        unless: action.unless,
        actions: action.actions,
        event,
        rule: action.rule,
        ...timerTimes(action),
        resumed: previous?.state === 'started',
        onRegistered: () => state.commit(action.id, begin(previous, Date.now())),
      });
      return outcome === 'gone'
        ? `timer ${timerId} (fired or cancelled since an earlier run)`
        : `timer ${timerId}`;
    }
  }
}

function timerTimes(action: Extract<PlannedAction, { type: 'timer' }>) {
  return {
    ...(action.dueAt !== undefined ? { dueAt: action.dueAt } : {}),
    ...(action.dueLocal !== undefined ? { dueLocal: action.dueLocal } : {}),
    ...(action.clock !== undefined ? { clock: action.clock } : {}),
    ...(action.trigger !== undefined ? { trigger: action.trigger } : {}),
  };
}
