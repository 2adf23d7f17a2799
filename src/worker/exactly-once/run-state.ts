import { coalescedWrites } from '../../redis/coalesced-writes.js';
import type { RedisClient } from '../../redis/redis-client.js';
import { type LedgerEntry, parseLedgerEntry } from './action-ledger.js';

const LEDGER_FIELD = 'a:';
const PLAN_FIELD = 'plan';

/**
 * The state of one run (an event's, or a fired timer's): its frozen plan and its action ledger
 * (see action-ledger.ts), kept in one hash (`keys.run`), plus what the run learnt about its
 * conversation (sent texts, once-marks, cooldowns, tags set and removed) for the conversation hash.
 *
 * Only what must be durable BEFORE an outside call is written at once (`commit`: the `started`
 * entry of a note or reply, with everything staged so far); what follows a call (`done`,
 * `skipped`...) is staged and written with the next commit, by the run's finish step, or by
 * `flush` when the run stops early. A crash loses only staged entries, and a lost `done` leaves
 * `started`, which the next run reconciles against history: never a second send.
 */
export class RunState {
  readonly ledger: Map<string, LedgerEntry>;
  /** The plan an earlier run froze (JSON), if any. */
  readonly storedPlan: string | null;
  private readonly staged = new Map<string, string>();
  private readonly conversationStaged = new Map<string, string>();
  /** Conversation-hash fields to delete (an untag); a field staged later for a value leaves this set. */
  private readonly conversationRemoved = new Set<string>();
  private hasKey: boolean;

  constructor(
    private readonly redis: RedisClient,
    readonly runKey: string,
    readonly conversationKey: string,
    stored: Record<string, string>,
    /** The expiry its first write gives the run's key (StoreTtls.unfinishedRunSeconds). */
    private readonly ttlSeconds: number,
  ) {
    this.ledger = new Map();
    for (const [field, value] of Object.entries(stored)) {
      if (!field.startsWith(LEDGER_FIELD)) continue;
      const entry = parseLedgerEntry(value);
      if (entry) this.ledger.set(field.slice(LEDGER_FIELD.length), entry);
    }
    this.storedPlan = stored[PLAN_FIELD] ?? null;
    this.hasKey = Object.keys(stored).length > 0;
  }

  /** Reads a run's state (a timer's run; an event's comes with processor/prepare-run.ts). */
  static async load(
    redis: RedisClient,
    runKey: string,
    conversationKey: string,
    ttlSeconds: number,
  ): Promise<RunState> {
    return new RunState(redis, runKey, conversationKey, await redis.hgetall(runKey), ttlSeconds);
  }

  /** Freezes the plan: written with the run's first write. */
  stagePlan(planJson: string): void {
    this.staged.set(PLAN_FIELD, planJson);
  }

  stage(actionId: string, entry: LedgerEntry): void {
    this.ledger.set(actionId, entry);
    this.staged.set(`${LEDGER_FIELD}${actionId}`, JSON.stringify(entry));
  }

  /** A field of the conversation hash to write with the run's next write (or its finish). */
  stageConversation(field: string, value: string): void {
    this.conversationRemoved.delete(field);
    this.conversationStaged.set(field, value);
  }

  /** A field of the conversation hash to delete with the run's next write (or its finish). */
  stageConversationRemoval(field: string): void {
    this.conversationStaged.delete(field);
    this.conversationRemoved.add(field);
  }

  /** Records an entry durably now, with everything staged (awaited before an outside call). */
  async commit(actionId: string, entry: LedgerEntry): Promise<void> {
    this.stage(actionId, entry);
    await this.flush();
  }

  /** Writes everything staged (a run that stops early keeps what it knows). */
  async flush(): Promise<void> {
    if (this.staged.size === 0 && this.conversationStaged.size === 0 && this.conversationRemoved.size === 0) {
      return;
    }
    const run = this.staged.size > 0 ? Object.fromEntries(this.staged) : null;
    const expire = run !== null && !this.hasKey;
    const conversation =
      this.conversationStaged.size > 0 ? Object.fromEntries(this.conversationStaged) : null;
    const removed = [...this.conversationRemoved];
    if (run) this.hasKey = true;
    this.staged.clear();
    this.conversationStaged.clear();
    this.conversationRemoved.clear();
    const results = await coalescedWrites(this.redis).exec(this.runKey, (pipeline) => {
      let count = 0;
      if (run) {
        pipeline.hset(this.runKey, run);
        count += 1;
        if (expire) {
          pipeline.expire(this.runKey, this.ttlSeconds);
          count += 1;
        }
      }
      if (conversation) {
        pipeline.hset(this.conversationKey, conversation);
        count += 1;
      }
      if (removed.length > 0) {
        pipeline.hdel(this.conversationKey, ...removed);
        count += 1;
      }
      return count;
    });
    for (const [error] of results) if (error) throw error;
  }

  /** What remains to be written to the conversation hash (a finish step writes it; the run's own state is deleted). */
  takeConversationFields(): Record<string, string> {
    const fields = Object.fromEntries(this.conversationStaged);
    this.conversationStaged.clear();
    this.staged.clear();
    return fields;
  }

  /** The conversation-hash fields that remain to be deleted (a finish step deletes them with its write). */
  takeConversationRemovals(): string[] {
    const fields = [...this.conversationRemoved];
    this.conversationRemoved.clear();
    return fields;
  }
}
