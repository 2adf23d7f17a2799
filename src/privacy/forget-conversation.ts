import { setTimeout as sleep } from 'node:timers/promises';
import { ConvoBridgeError } from '../base/errors.js';
import type { KeyLayout } from '../queue/key-layout.js';
import type { RedisClient } from '../redis/redis-client.js';
import { forgetStory } from '../story/forget-story.js';
import { checkEveryNode } from './check-every-node.js';
import {
  forgetDeadLetters,
  forgetQuarantine,
  forgetRecorded,
  forgetShadowDifferences,
} from './global-stores.js';
import type { ConversationRef } from './job-data.js';
import {
  eraseConversationState,
  forgetJobs,
  forgetRuns,
  forgetStreamEntries,
  pendingWork,
} from './shard-stores.js';

/** Every store `forget` erases from, in the order it reports them (docs/privacy.md has the table). */
export const FORGET_STORES = [
  'conversation state',
  'event jobs',
  'timer jobs',
  'queue event log',
  'run state',
  'dead letters',
  'quarantined bodies',
  'recorded events',
  'shadow differences',
  'story',
] as const;
export type ForgetStore = (typeof FORGET_STORES)[number];

export interface ForgetResult {
  conversationId: string;
  business: string | null;
  /** Entries erased (or, with dryRun, that would be) per store. */
  erased: Record<ForgetStore, number>;
  /** Time spent waiting for the conversation's queued or running events to finish. */
  waitedMs: number;
  /** With dryRun: events of the conversation still queued or running (forget would wait for them). */
  pending: number;
}

export interface ForgetOptions {
  dryRun?: boolean;
  /** How long to wait for the conversation's queued or running events to finish (default 60 s). */
  waitMs?: number;
  /** How often to look again while waiting. */
  pollMs?: number;
}

export class ForgetBusyError extends ConvoBridgeError {
  constructor(
    readonly conversationId: string,
    readonly pending: number,
    waitedMs: number,
  ) {
    super(
      `conversation ${JSON.stringify(conversationId)} still has ${pending} event(s) or timer(s) queued or running after ${Math.round(waitedMs / 1000)} s, so nothing of it was erased: its events finish before its data goes, so that none of them writes it again afterwards. Is the worker running (convo-bridge start or work) and not paused? Run forget again once it has caught up, or give --wait a longer time`,
      { code: 'FORGET_BUSY' },
    );
  }
}

/**
 * Erases everything the bridge holds about one conversation: its state (facts,
 * once-marks, cooldowns, sent-text marks, timer registrations) and order, its pending timers (their
 * jobs go, and with their registrations gone they could not fire anyway), the data of its jobs in
 * every state (batches shared with other conversations are rewritten without its events), BullMQ's
 * event-log entries naming it, the kept run state of its dead-lettered events, its dead letters,
 * quarantined bodies, recorded events and shadow rules differences, and its story with its search
 * index entries.
 *
 * Safe while the bridge runs: an event of the conversation that is still queued or running is
 * finished first. forget waits (up to `waitMs`) until none is left, then erases the state in one
 * step that refuses if an event arrived meanwhile (and waits again); an event that arrives after
 * that is a new message, handled as any new conversation. Dedupe markers are kept: they hold no id
 * or text (a hash of the event key, an arrival number and 8 hex digits of the conversation id's
 * hash) and they keep a late redelivery of an erased event from being acted on again.
 * Idempotent: a second run finds nothing. Refuses (ForgetUnavailableError), erasing nothing, when
 * a Redis node does not answer or a cluster's slots are not all served (check-every-node.ts).
 */
export async function forgetConversation(
  redis: RedisClient,
  layout: KeyLayout,
  conversationId: string,
  options: ForgetOptions = {},
): Promise<ForgetResult> {
  await checkEveryNode(redis);
  const dryRun = options.dryRun === true;
  const ref: ConversationRef = { conversationId, tag: layout.naming.tag };
  const shard = layout.shardOf(conversationId);
  const started = Date.now();
  const erased = Object.fromEntries(FORGET_STORES.map((store) => [store, 0])) as Record<ForgetStore, number>;
  const result: ForgetResult = { conversationId, business: layout.business, erased, waitedMs: 0, pending: 0 };

  // 1. Its events finish first; then its state goes in one step that re-checks it.
  const waitMs = options.waitMs ?? 60_000;
  for (;;) {
    const pending = await pendingWork(redis, shard, ref);
    if (dryRun) {
      result.pending = pending;
      break;
    }
    if (pending === 0) {
      const state = await eraseConversationState(redis, shard, conversationId, false);
      if (state.kind === 'done') {
        erased['conversation state'] = state.keys;
        break;
      }
    }
    if (Date.now() - started >= waitMs)
      throw new ForgetBusyError(conversationId, Math.max(pending, 1), waitMs);
    await sleep(options.pollMs ?? 200);
  }
  result.waitedMs = Date.now() - started;
  if (dryRun) {
    const state = await eraseConversationState(redis, shard, conversationId, true);
    if (state.kind === 'done') erased['conversation state'] = state.keys;
  }
  // Its story, summary and search index entries (story/), in its shard's slot.
  erased.story = await forgetStory(redis, shard.keys, conversationId, dryRun);

  // 2. Its jobs, their event log, dead letters, and the run state those kept for a replay.
  const eventKeys: string[] = [];
  await eraseJobs(redis, layout, ref, dryRun, eventKeys, erased, { started, deadline: started + waitMs });
  const dead = await forgetDeadLetters(redis, layout.global, ref, dryRun);
  erased['dead letters'] = dead.erased;
  eventKeys.push(...dead.eventKeys);
  erased['recorded events'] = await forgetRecorded(redis, layout.global, ref, dryRun, eventKeys);
  erased['run state'] = await forgetRuns(redis, shard, eventKeys, dryRun);
  // The event log names a done event by its key (its job, and so its data, may be gone already).
  for (const name of ['events', 'timers'] as const) {
    erased['queue event log'] += await forgetStreamEntries(redis, shard, name, ref, dryRun, eventKeys);
  }

  // 3. The stores of no shard.
  erased['quarantined bodies'] = await forgetQuarantine(redis, layout.global, ref, dryRun);
  erased['shadow differences'] = await forgetShadowDifferences(redis, layout.global, ref, dryRun);
  return result;
}

/**
 * The conversation's jobs in both queues. A job a worker holds right now (a timer that woke just
 * as its registration went, a batch finishing its other conversations' events) cannot be removed:
 * search again until none is left or the deadline passes.
 */
async function eraseJobs(
  redis: RedisClient,
  layout: KeyLayout,
  ref: ConversationRef,
  dryRun: boolean,
  eventKeys: string[],
  erased: Record<ForgetStore, number>,
  time: { started: number; deadline: number },
): Promise<void> {
  const shard = layout.shardOf(ref.conversationId);
  for (;;) {
    let held = 0;
    for (const [name, store] of [
      ['events', 'event jobs'],
      ['timers', 'timer jobs'],
    ] as const) {
      const share = await forgetJobs(redis, shard, name, ref, dryRun);
      erased[store] += share.removed + share.rewritten;
      eventKeys.push(...share.eventKeys);
      held += share.held;
    }
    if (dryRun || held === 0) return;
    if (Date.now() >= time.deadline)
      throw new ForgetBusyError(ref.conversationId, held, Date.now() - time.started);
    await sleep(200);
  }
}
