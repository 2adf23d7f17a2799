import type { ConversationEvent } from '../../events/conversation-event.js';
import type { BridgeKeys } from '../../queue/redis-keys.js';
import type { RedisClient } from '../../redis/redis-client.js';
import { defineRedisScript } from '../../redis/redis-script.js';
import { BURST_LUA, type BurstArg, type BurstRule } from '../bursts/burst-store.js';
import { type StoredFacts, toStoredFacts, withCustomerMessage } from '../conversation-facts.js';
import { echoProbe } from '../exactly-once/own-sends.js';
import { RunState } from '../exactly-once/run-state.js';
import type { Plan } from '../ports.js';
import type { StoreTtls } from '../store-ttls.js';
import { GATE_LUA, type GateDecision } from './order-gate.js';

/**
 * Everything the runs of a batch read before they act, in ONE round trip for the whole batch
 * (this is the hot path: at a few thousand events per second every round trip and every command
 * counts). Per event: the order gate (see order-gate.ts), and, when it is the event's turn, its
 * conversation hash (facts, once-marks, cooldowns, sent texts, timers), the cancellation of the
 * pending timers this kind of event stops, the recording of a customer message (last message
 * time, first message), and the event's run state (a plan frozen by an earlier run, the ledger).
 * Nothing but the gate runs for an event that has to wait, so a later event never cancels a timer
 * that an earlier one is about to set.
 *
 * KEYS, per event: order zset, conversation hash, run hash.
 * ARGV: job key prefix, failed set key, dedupe key prefix, now ms, ghost grace ms, batch job id,
 * '1' to skip the gate (a replay), conversation ttl seconds; then per event: order member, kind,
 * occurred-at (ISO, UTC), event key, and two conversation-hash fields whose presence marks the
 * event as the echo of the bridge's own send ('' when not looked for; exactly-once/own-sends.ts): an
 * echo cancels no timer, and is reported so that no rule runs for it; and the burst argument of a
 * customer message when some rules are debounced ('' otherwise: nothing more is done;
 * bursts/burst-store.ts): its open bursts (`B:` fields) are cancelled like timers, and a customer
 * message joins or begins each debounced rule's burst.
 */
const PREPARE_LUA = `${GATE_LUA}${BURST_LUA}
local out = {}
local ttl = tonumber(ARGV[8])
for i = 1, #KEYS / 3 do
  local order, conv, run = KEYS[3 * i - 2], KEYS[3 * i - 1], KEYS[3 * i]
  local base = 8 + 7 * (i - 1)
  local me, kind, at, key = ARGV[base + 1], ARGV[base + 2], ARGV[base + 3], ARGV[base + 4]
  local echoId, echoText, burstArg = ARGV[base + 5], ARGV[base + 6], ARGV[base + 7]
  local probe = echoId ~= '' or echoText ~= ''
  local status, other = 'go', ''
  if ARGV[7] ~= '1' then status, other = gate(order, me, ARGV[6]) end
  if status ~= 'go' then
    out[i] = {status, other}
  else
    local facts = redis.call('HGETALL', conv)
    local lastIn, firstIn, pending, echo = nil, nil, false, false
    local cancelled, ids, bursts = {}, {}, {}
    for j = 1, #facts, 2 do
      local f = facts[j]
      if probe and (f == echoId or f == echoText) then echo = true end
      if f == 'lastIn' then lastIn = facts[j + 1]
      elseif f == 'firstIn' then firstIn = facts[j + 1]
      elseif string.sub(f, 1, 2) == 'T:' then
        local state = facts[j + 1]
        if string.sub(state, 1, 2) == 'p:' and string.find(',' .. string.sub(state, 3) .. ',', ',' .. kind .. ',', 1, true) then
          table.insert(cancelled, f)
          table.insert(ids, f)
        else
          pending = true
        end
      elseif string.sub(f, 1, 2) == 'B:' then
        local state = facts[j + 1]
        if string.sub(state, 1, 2) == 'p:' and burst_cancels(state, kind) then
          table.insert(cancelled, f)
          table.insert(ids, 'B:' .. burst_id(state))
        else
          if string.sub(state, 1, 2) == 'p:' then pending = true end
          bursts[f] = state
        end
      end
    end
    if echo and #cancelled > 0 then cancelled = {}; ids = {}; pending = true end
    if #cancelled > 0 then redis.call('HDEL', conv, unpack(cancelled)) end
    local started = {}
    if kind == 'message_in' then
      if burstArg ~= '' then
        started = burst_note(conv, bursts, burstArg)
        if #started > 0 then pending = true end
      end
      local update = {}
      if (not lastIn) or at > lastIn then update[#update + 1] = 'lastIn'; update[#update + 1] = at end
      if not firstIn then update[#update + 1] = 'firstIn'; update[#update + 1] = key end
      if #update > 0 then
        redis.call('HSET', conv, unpack(update))
        if not pending then
          redis.call('EXPIRE', conv, ttl)
        elseif redis.call('PTTL', conv) < ttl * 1000 then
          redis.call('PEXPIRE', conv, ttl * 1000)
        end
      end
    end
    out[i] = {'go', other, facts, ids, redis.call('HGETALL', run), echo and 1 or 0, started}
  end
end
return out
`;
const prepareScript = defineRedisScript<unknown[][]>('PrepareBatch', 'any', PREPARE_LUA);

export interface PreparedEvent {
  gate: Extract<GateDecision, { kind: 'go' }>;
  /** The conversation's facts; planning replaces them when it learns from history (plan-event.ts). */
  facts: StoredFacts;
  /** The conversation hash has no TTL yet (a write must give it one). */
  newConversation: boolean;
  /** Timer ids (and burst ids) whose registration this event cancelled. */
  cancelledTimers: string[];
  /** Bursts this customer message began, whose jobs the run adds. */
  startedBursts: { rule: string; burstId: string }[];
  /** The debounced rules the message was prepared with (their settings for the jobs). */
  burstRules: readonly BurstRule[];
  /** The event reports a message the bridge sent itself (exactly-once/own-sends.ts): no rule runs for it. */
  ownSend: boolean;
  state: RunState;
  /** What the rules said when this run froze the plan (plan-event.ts; absent when read back), for the story. */
  evaluated?: Plan;
}

export type PrepareOutcome = PreparedEvent | { gate: Exclude<GateDecision, { kind: 'go' }> };

export interface PrepareInput {
  jobId: string;
  /** `<prefix>:events:` (BullMQ's job hash prefix). */
  jobKeyPrefix: string;
  failedSet: string;
  now: number;
  ghostGraceMs: number;
  /** A replay from the dead-letter set: its events left the order long ago, run them as they are. */
  replay: boolean;
  /**
   * Each event, and its business's keys when they are not `keys` (a bridge of several);
   * a customer message's burst argument when its rules are debounced (bursts/burst-store.ts).
   */
  events: readonly { event: ConversationEvent; member: string; keys?: BridgeKeys; burst?: BurstArg }[];
  /** The conversation hash's expiry after a customer message, and a new run state's. */
  ttls: Pick<StoreTtls, 'conversationSeconds' | 'unfinishedRunSeconds'>;
}

function pairs(flat: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!Array.isArray(flat)) return out;
  for (let i = 0; i + 1 < flat.length; i += 2) out[String(flat[i])] = String(flat[i + 1]);
  return out;
}

/** `[rule, burst id, rule, burst id, ...]` as the prepare script returns the bursts a message began. */
function startedPairs(flat: unknown): { rule: string; burstId: string }[] {
  const out: { rule: string; burstId: string }[] = [];
  if (!Array.isArray(flat)) return out;
  for (let i = 0; i + 1 < flat.length; i += 2)
    out.push({ rule: String(flat[i]), burstId: String(flat[i + 1]) });
  return out;
}

const orNull = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

export async function prepareEvents(
  redis: RedisClient,
  keys: BridgeKeys,
  input: PrepareInput,
): Promise<PrepareOutcome[]> {
  const scriptKeys: string[] = [];
  const args: (string | number)[] = [
    input.jobKeyPrefix,
    input.failedSet,
    keys.dedupePrefix,
    input.now,
    input.ghostGraceMs,
    input.jobId,
    input.replay ? '1' : '0',
    input.ttls.conversationSeconds,
  ];
  for (const { event, member, keys: own, burst } of input.events) {
    const c = event.conversationId ?? '';
    const k = own ?? keys;
    scriptKeys.push(k.order(c), k.conversation(c), k.run(event.key));
    args.push(
      member,
      event.kind,
      new Date(event.occurredAt).toISOString(),
      event.key,
      ...echoProbe(event),
      burst?.arg ?? '',
    );
  }
  const replies = await prepareScript(redis, scriptKeys, args);
  return input.events.map(({ event, keys: own, burst }, index): PrepareOutcome => {
    const k = own ?? keys;
    const [kind, other, facts, cancelled, run, echo, started] = replies[index] ?? [];
    switch (kind) {
      case 'go': {
        const stored = toStoredFacts(Array.isArray(facts) ? facts : []);
        const c = event.conversationId ?? '';
        return {
          gate: { kind: 'go', released: orNull(other) },
          facts: event.kind === 'message_in' ? withCustomerMessage(stored, event) : stored,
          // A customer message gave the hash its TTL already (PREPARE_LUA).
          newConversation: event.kind !== 'message_in' && (!Array.isArray(facts) || facts.length === 0),
          cancelledTimers: Array.isArray(cancelled) ? cancelled.map((f) => String(f).slice(2)) : [],
          startedBursts: startedPairs(started),
          burstRules: burst?.rules ?? [],
          ownSend: echo === 1,
          state: new RunState(
            redis,
            k.run(event.key),
            k.conversation(c),
            pairs(run),
            input.ttls.unfinishedRunSeconds,
          ),
        };
      }
      case 'skip':
        return { gate: { kind: 'skip' } };
      case 'chain':
        return { gate: { kind: 'chain', after: String(other) } };
      default:
        return { gate: { kind: 'wait', blockedBy: orNull(other) } };
    }
  });
}
