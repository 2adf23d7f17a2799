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
  const now = ctx.now();
  if (action.once) {
    const last = ctx.facts.onceMarks[action.once.key];
    if (last && now.getTime() - Date.parse(last) < action.once.ttlMs) {
      return { reason: `once_per_conversation: already sent at ${last}`, windowClosed: false };
    }
  }
  const window = ctx.rules.replyWindow(ctx.event.channel, ctx.facts.lastCustomerMessageAt, now);
  const verdict = replyWindowVerdict(window, now, ctx.safetyMarginMs);
  if (!verdict.send) {
    const last = ctx.facts.lastCustomerMessageAt?.toISOString() ?? 'unknown';
    const why =
      verdict.reason === 'margin' ? 'about to close' : verdict.reason === 'unknown' ? 'unknown' : 'closed';
    return { reason: `reply window ${why} (last customer message ${last})`, windowClosed: true };
  }
  return undefined;
}

export async function perform(action: PlannedAction, ctx: ExecutionContext): Promise<string | undefined> {
  const conversationId = ctx.conversationId;
  switch (action.type) {
    case 'note': {
      const result = await ctx.platform.addNote(conversationId, action.text);
      return result.messageId ? `message ${result.messageId}` : undefined;
    }
    case 'need_human':
      await ctx.platform.markNeedHuman(conversationId);
      return undefined;
    case 'reply': {
      const now = ctx.now();
      const verdict = replyWindowVerdict(
        ctx.rules.replyWindow(ctx.event.channel, ctx.facts.lastCustomerMessageAt, now),
        now,
        ctx.safetyMarginMs,
      );
      // Closed since the check a moment ago: the client's guard refuses it (handled as window-closed).
      // Judged by the worker's clock, the one the verdict used (a guard on the system clock
      // refused sends the worker's shifted test clock had found in time).
      const guard = verdict.send
        ? verdict.guardUntil
          ? { windowClosesAt: verdict.guardUntil, now: ctx.now }
          : undefined
        : { windowClosesAt: now, now: ctx.now };
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
      const result = await ctx.platform.sendMessage(
        action.replyToMessageId ? { ...input, replyToMessageId: action.replyToMessageId } : input,
        guard,
      );
      if (action.once) markOnce(ctx, action.once.key, ctx.now());
      return result.messageId ? `message ${result.messageId}` : undefined;
    }
    case 'forward': {
      const body = {
        type: 'convo_bridge.event' as const,
        rule: action.rule,
        action: action.id,
        event: ctx.event,
        tags: forwardTags(action, ctx),
      };
      const result = await ctx.forwarder.forward(action.destination, body, `${ctx.scope}|${action.id}`);
      return `HTTP ${result.status}`;
    }
    case 'tag':
    case 'untag':
      return performTagAction(action, ctx);
    case 'timer': {
      const timerId = ctx.timerIdFor(ctx.scope, action.id);
      // Done jobs are not kept (retention.done_events), so the job id alone does not stop
      // a repeat from setting a timer that already fired: `started` is recorded once the timer is
      // registered, and a run that finds it (an earlier run was cut off) keeps a registration but
      // never makes a new one: no registration means the timer fired or was cancelled since.
      const previous = ctx.state.ledger.get(action.id);
      const outcome = await ctx.timers.schedule({
        timerId,
        conversationId,
        delayMs: action.delayMs,
        unless: action.unless,
        actions: action.actions,
        event: ctx.event,
        rule: action.rule,
        ...timerTimes(action),
        resumed: previous?.state === 'started',
        onRegistered: () => ctx.state.commit(action.id, begin(previous, Date.now())),
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
