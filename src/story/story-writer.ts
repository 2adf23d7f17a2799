import type { RetentionSettings, StorySettings } from '../config/config-schema.js';
import type { ConversationEvent } from '../events/conversation-event.js';
import type { BridgeKeys } from '../queue/redis-keys.js';
import type { PlannedAction, RuleOutcome } from '../rules/plan.js';
import {
  buildEventStory,
  buildTimerStory,
  type EventStoryInput,
  type TimerStoryInput,
} from './build-story-write.js';
import { NO_STORY, type StoryScriptInput, storyScriptInput } from './story-lua.js';

/** What the worker holds when an event's run finishes (structural: the story imports nothing of the worker). */
export interface FinishedEvent {
  event: ConversationEvent;
  plan: { actions: readonly PlannedAction[]; matched: readonly { rule: string }[] };
  /** What the rules said, when this run evaluated the plan (a re-run reads a frozen plan back). */
  evaluated?: { outcomes: readonly RuleOutcome[]; blockedReplies: readonly unknown[] } | undefined;
  reports: EventStoryInput['reports'];
  cancelledTimers: readonly string[];
  /** The last customer message before the event (conversation facts). */
  lastCustomerMessageAt: Date | null;
  rules: {
    replyWindow(
      channel: ConversationEvent['channel'],
      last: Date | null,
      now: Date,
    ): { applies: boolean; open: boolean; closesAt: Date | null };
  };
  ownSend: boolean;
  /** Runs of the event it took, this one included (1 when not known). */
  attempts?: number;
}

/**
 * Builds the story's part of the worker's finish steps (story-lua.ts): the worker hands it what
 * it holds, and sends what comes back with the finish script it sends anyway.
 */
export interface StoryWriter {
  forEvent(keys: BridgeKeys, finished: FinishedEvent): StoryScriptInput;
  /** An event dead-lettered: what its actions did, and why it failed for good. */
  forDeadLetter(
    keys: BridgeKeys,
    failed: { event: ConversationEvent; reports: FinishedEvent['reports']; attempts: number; error: string },
  ): StoryScriptInput;
  /** A timer that fired, and what its actions did. */
  forTimer(keys: BridgeKeys, conversationId: string, fired: Omit<TimerStoryInput, 'now'>): StoryScriptInput;
}

/** The writer; a writer that writes nothing when `story.enabled` is off. */
export function createStoryWriter(
  settings: StorySettings,
  retention: Pick<RetentionSettings, 'storiesMs'>,
  now: () => number = Date.now,
  /** The id the worker gives a timer an action of a run (scope: the event's key) sets. */
  timerIdFor?: (scope: string, actionId: string) => string,
): StoryWriter {
  const options = (at: number, events: number) => ({
    now: at,
    ttlMs: retention.storiesMs,
    maxEntries: settings.maxEntries,
    events,
  });
  if (!settings.enabled)
    return { forEvent: () => NO_STORY, forDeadLetter: () => NO_STORY, forTimer: () => NO_STORY };
  return {
    forEvent(keys, finished) {
      const at = now();
      const { event } = finished;
      const conversationId = event.conversationId ?? '';
      if (conversationId === '') return NO_STORY;
      let last = finished.lastCustomerMessageAt;
      if (event.kind === 'message_in') {
        const occurred = new Date(event.occurredAt);
        if (last === null || occurred > last) last = occurred;
      }
      const window = finished.rules.replyWindow(event.channel, last, new Date(at));
      const write = buildEventStory(
        {
          event,
          now: at,
          actions: finished.plan.actions,
          matched: finished.plan.matched.map((m) => m.rule),
          ...(finished.evaluated
            ? {
                outcomes: finished.evaluated.outcomes,
                blockedAtPlanning: finished.evaluated.blockedReplies.length,
              }
            : {}),
          reports: finished.reports,
          cancelledTimers: finished.cancelledTimers,
          windowApplies: window.applies,
          windowOpenUntil: window.open ? window.closesAt : null,
          attempts: finished.attempts ?? 1,
          ownSend: finished.ownSend,
          ...(timerIdFor ? { timerIdOf: (id: string) => timerIdFor(event.key, id) } : {}),
        },
        settings,
      );
      return storyScriptInput(keys, conversationId, write, options(at, 1));
    },
    forDeadLetter(keys, failed) {
      const at = now();
      const conversationId = failed.event.conversationId ?? '';
      if (conversationId === '') return NO_STORY;
      const write = buildEventStory(
        {
          event: failed.event,
          now: at,
          actions: [],
          matched: [],
          reports: failed.reports,
          cancelledTimers: [],
          windowApplies: false,
          windowOpenUntil: null,
          attempts: failed.attempts,
          ownSend: false,
          deadLettered: failed.error,
        },
        settings,
      );
      return storyScriptInput(keys, conversationId, write, options(at, 1));
    },
    forTimer(keys, conversationId, fired) {
      const at = now();
      return storyScriptInput(keys, conversationId, buildTimerStory({ ...fired, now: at }), options(at, 0));
    },
  };
}
