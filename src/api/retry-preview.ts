import { z } from 'zod';
import { BatchedEventSchema } from '../queue/event-job.js';
import type { BridgeKeys } from '../queue/redis-keys.js';
import { comparePlans } from '../record/backtest.js';
import { type PlanSummary, summarizePlan } from '../record/recorded-event.js';
import type { RedisClient } from '../redis/redis-client.js';
import { evaluateRules } from '../rules/evaluate-rules.js';
import type { PlannedAction } from '../rules/plan.js';
import { isBurstJobData } from '../worker/bursts/burst-job.js';
import { factsForEvaluation, loadFacts } from '../worker/conversation-facts.js';
import { decide, type LedgerEntry } from '../worker/exactly-once/action-ledger.js';
import { RunState } from '../worker/exactly-once/run-state.js';
import type { DeadLetter } from '../worker/failures/dead-letters.js';
import type { FrozenPlan } from '../worker/ports.js';
import { TimerJobDataSchema } from '../worker/timers/timers.js';
import type { ApiBusiness } from './api-deps.js';

const ActionViewSchema = z.object({ id: z.string(), rule: z.string(), type: z.string() });
const PlanViewSchema = z.object({
  matched: z.array(z.string()),
  actions: z.array(ActionViewSchema),
  blocked: z
    .array(z.string())
    .describe('Replies the closed reply window replaces by their when_closed actions.'),
});

export const RetryPreviewSchema = z.object({
  id: z.string(),
  queue: z.enum(['events', 'timers']),
  conversation: z.string().nullable(),
  failedAt: z.string(),
  error: z.object({ code: z.string(), reason: z.string() }),
  original: PlanViewSchema.nullable().describe(
    'The plan frozen when the event first ran (null when its run state is no longer kept, or for a burst).',
  ),
  now: PlanViewSchema.nullable().describe(
    "What the current rules plan for the event now, with the conversation's facts as they are (null for timers and bursts: their actions were fixed when set).",
  ),
  differs: z
    .boolean()
    .describe("The current rules plan otherwise than the original plan (the backtest's comparison)."),
  added: z.array(ActionViewSchema).describe('Actions the current rules plan that the original did not.'),
  removed: z
    .array(ActionViewSchema)
    .describe('Actions of the original plan the current rules no longer plan.'),
  basis: z
    .enum(['original plan', 'current rules', 'timer actions', 'burst'])
    .describe('What a retry runs: the frozen plan when it is kept, else the current rules.'),
  wouldRun: z
    .array(ActionViewSchema.extend({ because: z.string() }))
    .describe('The actions a retry would run now; those already done are not repeated.'),
  done: z
    .array(ActionViewSchema.extend({ state: z.string() }))
    .describe('Actions that a retry leaves alone.'),
});
export type RetryPreview = z.infer<typeof RetryPreviewSchema>;

type ActionView = z.infer<typeof ActionViewSchema>;
const view = (a: { id: string; rule: string; type: string }): ActionView => ({
  id: a.id,
  rule: a.rule,
  type: a.type,
});
const planView = (plan: PlanSummary) => ({
  matched: plan.matched,
  actions: plan.actions.map(view),
  blocked: plan.blocked,
});

/** A run's ledger and frozen plan, read the way the worker reads them (exactly-once/run-state.ts). */
async function runStateOf(redis: RedisClient, keys: BridgeKeys, runId: string, conversationId: string) {
  const runKey = keys.run(runId);
  return new RunState(redis, runKey, keys.conversation(conversationId), await redis.hgetall(runKey), 0);
}

/** What a replay does with each action, by its ledger entry (a replay tries failed ones again). */
function splitByLedger(
  actions: readonly PlannedAction[],
  ledger: ReadonlyMap<string, LedgerEntry>,
): Pick<RetryPreview, 'wouldRun' | 'done'> {
  const wouldRun: RetryPreview['wouldRun'] = [];
  const done: RetryPreview['done'] = [];
  for (const action of actions) {
    const entry = ledger.get(action.id);
    const decision = decide(entry);
    if (decision.kind === 'run')
      wouldRun.push({ ...view(action), because: entry ? 'not sent before' : 'never run' });
    else if (decision.kind === 'reconcile')
      wouldRun.push({
        ...view(action),
        because: 'outcome unknown: checked against history first, sent only if absent',
      });
    else if (decision.state === 'failed')
      wouldRun.push({
        ...view(action),
        because: `failed for good before${entry?.detail ? ` (${entry.detail})` : ''}: tried again`,
      });
    else done.push({ ...view(action), state: decision.state });
  }
  return { wouldRun, done };
}

/**
 * What a retry of one dead letter would do now, computed without calling anything: the plan the
 * event was first run with (frozen in its run state, kept as long as the dead letter), what the
 * current rules would plan for it with the conversation's facts as they are, the two compared as
 * the backtest compares plans, and the actions the retry would run (the ledger's say: done actions
 * are never repeated). Reads Redis only; the rules are evaluated in memory.
 */
export async function previewRetry(
  redis: RedisClient,
  keysOf: (conversationId: string) => BridgeKeys,
  business: ApiBusiness,
  entry: DeadLetter,
  now: Date,
): Promise<RetryPreview> {
  const base = {
    id: entry.id,
    queue: entry.queue,
    conversation: entry.conversationId,
    failedAt: entry.failedAt,
    error: { code: entry.code, reason: entry.reason },
  };
  const keys = keysOf(entry.conversationId ?? '');
  const none = { original: null, now: null, differs: false, added: [], removed: [] };
  if (entry.queue === 'timers') {
    if (isBurstJobData(entry.data)) return { ...base, ...none, basis: 'burst', wouldRun: [], done: [] };
    const timer = TimerJobDataSchema.safeParse(entry.data);
    if (!timer.success) return { ...base, ...none, basis: 'timer actions', wouldRun: [], done: [] };
    const { ledger } = await runStateOf(redis, keys, timer.data.timerId, timer.data.conversationId);
    const actions = timer.data.actions;
    const plan = planView(summarizePlan({ matched: [{ rule: timer.data.rule }], actions }));
    return { ...base, ...none, original: plan, basis: 'timer actions', ...splitByLedger(actions, ledger) };
  }
  const item = BatchedEventSchema.safeParse((entry.data as { events?: unknown[] } | null)?.events?.[0]);
  if (!item.success) return { ...base, ...none, basis: 'current rules', wouldRun: [], done: [] };
  const event = item.data.event;
  const conversationId = event.conversationId ?? '';
  const [run, facts] = await Promise.all([
    runStateOf(redis, keys, event.key, conversationId),
    loadFacts(redis, keys, conversationId),
  ]);
  const current = evaluateRules(business.rules, event, factsForEvaluation(facts, event), now);
  const nowPlan = summarizePlan(current);
  const frozen = run.storedPlan === null ? null : (JSON.parse(run.storedPlan) as FrozenPlan);
  const originalPlan = frozen ? summarizePlan(frozen) : null;
  const compared = originalPlan ? comparePlans(originalPlan, nowPlan) : null;
  return {
    ...base,
    original: originalPlan ? planView(originalPlan) : null,
    now: planView(nowPlan),
    differs: compared ? !compared.same : false,
    added: compared?.added.map(view) ?? [],
    removed: compared?.removed.map(view) ?? [],
    // A replay runs the frozen plan when it is kept (worker/processor/plan-event.ts), else plans anew.
    basis: frozen ? 'original plan' : 'current rules',
    ...splitByLedger(frozen ? frozen.actions : current.actions, run.ledger),
  };
}
