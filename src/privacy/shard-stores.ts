import { Queue } from 'bullmq';
import type { QueueShard } from '../queue/key-layout.js';
import { QUEUE_NAMES } from '../queue/redis-keys.js';
import type { RedisClient } from '../redis/redis-client.js';
import { defineRedisScript } from '../redis/redis-script.js';
import { CONVERSATION_FIELDS, TIMER_REGISTRATION } from '../worker/conversation-facts.js';
import { belongsTo, type ConversationRef, parseJson, stripBatch, stripReturnValue } from './job-data.js';
import { conversationNeedles } from './needles.js';
import { findJobs, type JobState } from './scan-stores.js';

/**
 * The stores of the conversation's queue shard: its state (one hash) and order, the jobs of the
 * shard's `events` and `timers` queues that hold its events, BullMQ's event log of those queues,
 * and the run state of its events. Every key here is under the shard's hash tag.
 */

/**
 * KEYS: order zset, conversation hash. ARGV: '1' for a dry run, the timer field prefix and the
 * firing registration value (worker/conversation-facts.ts owns both). Erases the conversation's
 * state unless an event of it is still queued (its order set is not empty) or one of its timers is
 * firing: then answers 'busy' and changes nothing. Else answers {'done', deleted keys, timer id, ...}.
 */
const ERASE_STATE_LUA = `
if redis.call('ZCARD', KEYS[1]) > 0 then return {'busy'} end
local facts = redis.call('HGETALL', KEYS[2])
local out = {'done', 0}
local prefix = ARGV[2]
for i = 1, #facts, 2 do
  if string.sub(facts[i], 1, #prefix) == prefix then
    if facts[i + 1] == ARGV[3] then return {'busy'} end
    out[#out + 1] = string.sub(facts[i], #prefix + 1)
  end
end
if ARGV[1] ~= '1' then out[2] = redis.call('DEL', KEYS[1], KEYS[2]) else out[2] = redis.call('EXISTS', KEYS[2]) end
return out
`;
const eraseStateScript = defineRedisScript<(string | number)[]>('PrivacyEraseState', 2, ERASE_STATE_LUA);

/** KEYS: a job hash. ARGV: data read, data to write, return value read ('' none), return value to write. */
const REWRITE_JOB_LUA = `
if redis.call('HGET', KEYS[1], 'data') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'data', ARGV[2])
if ARGV[3] ~= '' and redis.call('HGET', KEYS[1], 'returnvalue') == ARGV[3] then
  redis.call('HSET', KEYS[1], 'returnvalue', ARGV[4])
end
return 1
`;
const rewriteJobScript = defineRedisScript<number>('PrivacyRewriteJob', 1, REWRITE_JOB_LUA);

export type StateErase = { kind: 'busy' } | { kind: 'done'; keys: number; timerIds: string[] };

export async function eraseConversationState(
  redis: RedisClient,
  shard: QueueShard,
  conversationId: string,
  dryRun: boolean,
): Promise<StateErase> {
  const keys = shard.keys;
  const [status, deleted, ...timerIds] = await eraseStateScript(
    redis,
    [keys.order(conversationId), keys.conversation(conversationId)],
    [dryRun ? '1' : '0', CONVERSATION_FIELDS.timer, TIMER_REGISTRATION.firing],
  );
  if (status !== 'done') return { kind: 'busy' };
  return { kind: 'done', keys: Number(deleted), timerIds: timerIds.map(String) };
}

/** What is still running or queued for the conversation: it must finish before its data can go. */
export async function pendingWork(
  redis: RedisClient,
  shard: QueueShard,
  ref: ConversationRef,
): Promise<number> {
  const queued = await redis.zcard(shard.keys.order(ref.conversationId));
  const needles = conversationNeedles(ref.conversationId);
  let active = 0;
  for (const name of [QUEUE_NAMES.events, QUEUE_NAMES.timers]) {
    const found = await findJobs(redis, `${shard.queuePrefix}:${name}`, needles, ['active']);
    for (const id of found.keys()) {
      const data = parseJson(await redis.hget(`${shard.queuePrefix}:${name}:${id}`, 'data'));
      const theirs = name === QUEUE_NAMES.timers ? belongsTo(data, ref) : stripBatch(data, ref) !== null;
      if (theirs) active += 1;
    }
  }
  return queued + active;
}

export interface JobsShare {
  /** Jobs removed (they held nothing but the conversation's events or timers). */
  removed: number;
  /** Jobs of several conversations rewritten without its events. */
  rewritten: number;
  /** Jobs that could not be removed now (a worker holds them): search again. */
  held: number;
  eventKeys: string[];
}

/**
 * The conversation's share of one queue of the shard: a timer job or a batch of only its events
 * is removed (with BullMQ's own removal, which refuses a job a worker holds); a batch shared with
 * other conversations keeps theirs.
 */
export async function forgetJobs(
  redis: RedisClient,
  shard: QueueShard,
  queueName: 'events' | 'timers',
  ref: ConversationRef,
  dryRun: boolean,
): Promise<JobsShare> {
  const share: JobsShare = { removed: 0, rewritten: 0, held: 0, eventKeys: [] };
  const queueKey = `${shard.queuePrefix}:${queueName}`;
  const found = await findJobs(redis, queueKey, conversationNeedles(ref.conversationId));
  if (found.size === 0) return share;
  const queue = new Queue(queueName, { connection: redis, prefix: shard.queuePrefix });
  try {
    for (const [id, state] of found) {
      const outcome = await forgetJob(redis, queue, `${queueKey}:${id}`, id, state, ref, dryRun);
      if (outcome === null) continue;
      share.eventKeys.push(...outcome.eventKeys);
      share[outcome.kind] += 1;
    }
  } finally {
    await queue.close();
  }
  return share;
}

async function forgetJob(
  redis: RedisClient,
  queue: Queue,
  jobKey: string,
  id: string,
  state: JobState,
  ref: ConversationRef,
  dryRun: boolean,
): Promise<{ kind: 'removed' | 'rewritten' | 'held'; eventKeys: string[] } | null> {
  const [rawData, rawReturn] = await redis.hmget(jobKey, 'data', 'returnvalue');
  const data = parseJson(rawData);
  let kind: 'removed' | 'rewritten';
  let eventKeys: string[] = [];
  let rewrite: { data: string; returnValue: string } | undefined;
  if (queue.name === QUEUE_NAMES.timers) {
    if (!belongsTo(data, ref)) return null;
    kind = 'removed';
  } else {
    const stripped = stripBatch(data, ref);
    if (stripped === null) return null;
    eventKeys = stripped.eventKeys;
    kind = stripped.data === undefined ? 'removed' : 'rewritten';
    if (stripped.data !== undefined) {
      const value = stripReturnValue(parseJson(rawReturn), new Set(eventKeys));
      rewrite = { data: JSON.stringify(stripped.data), returnValue: rawReturn ? JSON.stringify(value) : '' };
    }
  }
  if (dryRun) return { kind, eventKeys };
  if (state === 'active') return { kind: 'held', eventKeys };
  if (rewrite === undefined) {
    const removed = await queue.remove(id);
    return { kind: removed === 1 ? 'removed' : 'held', eventKeys };
  }
  const done = await rewriteJobScript(
    redis,
    [jobKey],
    [rawData ?? '', rewrite.data, rawReturn ?? '', rewrite.returnValue],
  );
  return { kind: done === 1 ? 'rewritten' : 'held', eventKeys };
}

/**
 * Entries of BullMQ's event log of a queue (`<queue>:events`, a stream) that name the conversation
 * or one of its events (a done batch's return value lists its events by key).
 */
export async function forgetStreamEntries(
  redis: RedisClient,
  shard: QueueShard,
  queueName: 'events' | 'timers',
  ref: ConversationRef,
  dryRun: boolean,
  eventKeys: readonly string[] = [],
): Promise<number> {
  const stream = `${shard.queuePrefix}:${queueName}:events`;
  const needles = [
    ...conversationNeedles(ref.conversationId).values,
    ...new Set(eventKeys.map((key) => JSON.stringify(key))),
  ];
  const ids: string[] = [];
  let start = '-';
  for (;;) {
    const entries = (await redis.xrange(stream, start, '+', 'COUNT', 1000)) as [string, string[]][];
    for (const [id, fields] of entries) {
      if (fields.some((value) => needles.some((needle) => value.includes(needle)))) ids.push(id);
    }
    if (entries.length < 1000) break;
    start = `(${entries[entries.length - 1]?.[0]}`;
  }
  if (!dryRun && ids.length > 0) {
    for (let i = 0; i < ids.length; i += 500) await redis.xdel(stream, ...ids.slice(i, i + 500));
  }
  return ids.length;
}

/** The kept run state (plan, ledger) of the given events: a dead letter's, kept for its replay. */
export async function forgetRuns(
  redis: RedisClient,
  shard: QueueShard,
  eventKeys: readonly string[],
  dryRun: boolean,
): Promise<number> {
  const keys = [...new Set(eventKeys)].map((eventKey) => shard.keys.run(eventKey));
  let count = 0;
  for (let i = 0; i < keys.length; i += 500) {
    const pipeline = redis.pipeline();
    for (const key of keys.slice(i, i + 500)) {
      if (dryRun) pipeline.exists(key);
      else pipeline.del(key);
    }
    for (const [error, value] of (await pipeline.exec()) ?? []) {
      if (error) throw error;
      count += Number(value);
    }
  }
  return count;
}
