import type { Redis } from 'ioredis';
import type { BridgeKeys } from '../queue/redis-keys.js';
import { defineRedisScript } from '../shared/redis-script.js';
import { type LedgerEntry, parseLedgerEntry } from './action-ledger.js';
import { type StoredFacts, toStoredFacts } from './conversation-facts.js';
import { GATE_LUA, type GateDecision } from './order-gate.js';

/**
 * Everything an event's run reads before it acts, in ONE round trip (this is the hot path: at a
 * few thousand events per second every round trip counts): the order gate (see order-gate.ts),
 * and, when it is this event's turn, the conversation's facts, once-marks and cooldowns, the
 * cancellation of pending timers this kind of event stops, the frozen plan (if a previous run
 * made one) and the action ledger. Nothing but the gate runs for an event that has to wait, so a
 * later event never cancels a timer that an earlier one is about to set.
 *
 * KEYS: order, ghost prefix, facts, once, cooldowns, timers, plan, ledger
 * ARGV: job id, job key prefix, failed set key, now ms, ghost grace ms, event kind
 */
const PREPARE_LUA = `${GATE_LUA}
local cancelled = {}
local timers = redis.call('HGETALL', KEYS[6])
for i = 1, #timers, 2 do
  local state = timers[i + 1]
  if string.sub(state, 1, 2) == 'p:' and string.find(',' .. string.sub(state, 3) .. ',', ',' .. ARGV[6] .. ',', 1, true) then
    redis.call('HDEL', KEYS[6], timers[i])
    table.insert(cancelled, timers[i])
  end
end
local plan = redis.call('GET', KEYS[7]) or ''
return {'go', released, redis.call('HGETALL', KEYS[3]), redis.call('HGETALL', KEYS[4]),
  redis.call('HGETALL', KEYS[5]), cancelled, plan, redis.call('HGETALL', KEYS[8])}
`;
const prepareScript = defineRedisScript<[string, string, ...unknown[]]>('PrepareRun', 8, PREPARE_LUA);

export interface PreparedRun {
  gate: GateDecision;
  facts: StoredFacts;
  cancelledTimers: string[];
  /** The plan frozen by an earlier run, if any (JSON). */
  plan: string | null;
  ledger: Map<string, LedgerEntry>;
}

function pairs(flat: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!Array.isArray(flat)) return out;
  for (let i = 0; i + 1 < flat.length; i += 2) out[String(flat[i])] = String(flat[i + 1]);
  return out;
}

export async function prepareRun(
  redis: Redis,
  keys: BridgeKeys,
  input: {
    conversationId: string;
    eventKey: string;
    jobId: string;
    kind: string;
    jobKeyPrefix: string;
    failedSet: string;
    now: number;
    ghostGraceMs: number;
  },
): Promise<PreparedRun | { gate: Extract<GateDecision, { kind: 'wait' }> }> {
  const c = input.conversationId;
  const reply = await prepareScript(
    redis,
    [
      keys.order(c),
      keys.ghostPrefix(c),
      keys.facts(c),
      keys.once(c),
      keys.cooldowns(c),
      keys.timers(c),
      keys.plan(input.eventKey),
      keys.ledger(input.eventKey),
    ],
    [input.jobId, input.jobKeyPrefix, input.failedSet, input.now, input.ghostGraceMs, input.kind],
  );
  const [kind, other, facts, once, cooldowns, cancelled, plan, ledger] = reply;
  if (kind !== 'go') return { gate: { kind: 'wait', blockedBy: other === '' ? null : other } };
  const entries = new Map<string, LedgerEntry>();
  for (const [id, value] of Object.entries(pairs(ledger))) {
    const entry = parseLedgerEntry(value);
    if (entry) entries.set(id, entry);
  }
  return {
    gate: { kind: 'go', released: other === '' ? null : other },
    facts: toStoredFacts(pairs(facts), pairs(once), pairs(cooldowns)),
    cancelledTimers: Array.isArray(cancelled) ? cancelled.map(String) : [],
    plan: typeof plan === 'string' && plan !== '' ? plan : null,
    ledger: entries,
  };
}
