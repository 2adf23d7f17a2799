import { DelayedError, type Job, type Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { WorkerSettings } from '../../config/config-schema.js';
import { SINGLE_BUSINESS_ID, tagOfJob } from '../../events/business-naming.js';
import type { KeyLayout } from '../../queue/key-layout.js';
import type { RedisClient } from '../../redis/redis-client.js';
import type { StoryWriter } from '../../story/story-writer.js';
import type { BusinessWorkerMetrics, WorkerMetrics } from '../adapters/worker-metrics.js';
import type { PauseReason } from '../failures/job-failure-policy.js';
import { BusinessPaused } from '../failures/job-failure-policy.js';
import type { EventRecorder } from '../ports.js';
import { BusinessGate } from '../processor/business-gate.js';
import type { EventSlots } from '../processor/event-slots.js';
import {
  type EventJobResult,
  processEventJob,
  UNKNOWN_BUSINESS_RECHECK_MS,
} from '../processor/process-event.js';
import { processTimerJob, type TimerJobResult } from '../processor/process-timer.js';
import type { BatchDeps, ObservePort, ProcessorPorts } from '../processor/processor-deps.js';
import { createShadowObserver, type ShadowObserver } from '../shadow/shadow-observer.js';
import type { StoreTtls } from '../store-ttls.js';
import { createTimerScheduler } from '../timers/timers.js';
import { describeHeldCount, type HeldJobs } from './held-jobs.js';
import type { WorkerBusiness } from './worker-business.js';

/** The queues of one shard this process works on. */
export interface ShardQueues {
  shard: { index: number; queuePrefix: string };
  events: Queue;
  timers: Queue;
}

/** What every business's processor context shares. */
export interface SharedWorkerParts {
  redis: RedisClient;
  layout: KeyLayout;
  /** Every shard's queues (a 429 of a bridge of one business pauses them all). */
  allQueues: Queue[];
  /** The shards this process consumes. */
  consumed: readonly ShardQueues[];
  slots: EventSlots;
  now: () => Date;
  settings: WorkerSettings;
  /** The expiries of the keys the runs write (from `retention:`). */
  ttls: StoreTtls;
  log: Logger;
  /** The conversations' stories' part of the finish steps (`story:`). */
  story?: StoryWriter;
}

/** One business's processor contexts (one per consumed shard) and its gate. */
interface BusinessContext {
  readonly business: WorkerBusiness;
  readonly deps: ReadonlyMap<number, ProcessorPorts>;
  readonly gate: BusinessGate;
}

/** A business's state as `/readyz` reports it. */
export interface BusinessStatus {
  id: string;
  pausedForMs: number;
  /** Why it is paused (null when it is not). */
  pauseReason: PauseReason | null;
  running: number;
}

/**
 * The businesses a worker serves, and the processors that run each job with its business's
 * context. Every config is a table of businesses (a config without `businesses:` is a table of
 * one); a job names its business by its naming (`data.business`, events/business-naming.ts), so
 * the jobs of the single-business naming (written without `business`, as earlier releases did) run
 * with whichever business holds that naming now. A business removed by a hot reload keeps its
 * context until this process ends (its queued events finish), and the job of a naming no business
 * here holds waits in the delayed set, never dropped, and is said (held-jobs.ts).
 */
export class BusinessTable {
  /** By business id. */
  private readonly contexts = new Map<string, BusinessContext>();
  /** By naming tag: the businesses a reload removed (or renamed), kept for their queued jobs. */
  private readonly retired = new Map<string, BusinessContext>();
  /** By naming tag: who runs the jobs of that naming now. */
  private readonly byTag = new Map<string, BusinessContext>();
  private readonly gates = new Map<string, BusinessGate>();
  /** Per shard, what a batch's events are run with (rebuilt when the businesses change). */
  private readonly batches = new Map<number, BatchDeps>();
  private readonly warnedAt = new Map<string, number>();
  /** Every shadow observer made (one per business context), flushed when the worker closes. */
  private readonly shadows = new Set<ShadowObserver>();

  constructor(
    private readonly shared: SharedWorkerParts,
    private readonly metrics: BusinessWorkerMetrics | undefined,
    businesses: readonly WorkerBusiness[],
    /** Jobs held for a naming no business here holds: recorded, counted, and run once one does. */
    private readonly held: HeldJobs,
  ) {
    this.set(businesses);
  }

  /** Serves these businesses from now on; the ones left out are retired (see the class comment). */
  set(businesses: readonly WorkerBusiness[]): void {
    const next = new Map(businesses.map((business) => [business.id, this.contextFor(business)]));
    for (const context of this.contexts.values()) {
      const tag = context.business.naming.tag;
      const now = next.get(context.business.id);
      if (now === undefined || now.business.naming.tag !== tag) this.retired.set(tag, context);
    }
    this.contexts.clear();
    this.byTag.clear();
    for (const [id, context] of next) {
      this.contexts.set(id, context);
      this.byTag.set(context.business.naming.tag, context);
      this.retired.delete(context.business.naming.tag);
    }
    // Alone, a business has no one to leave slots to nor to be isolated from (business-gate.ts).
    for (const context of next.values()) context.gate.serving(next.size);
    this.batches.clear();
    // Jobs held for a naming a business now holds run at once, whichever process held them.
    this.held.serve([...this.byTag.keys()]);
  }

  processEvent(job: Job, token: string | undefined, shard: number): Promise<EventJobResult> {
    return processEventJob(job, token, this.batchDepsFor(shard));
  }

  async processTimer(job: Job, token: string | undefined, shard: number): Promise<TimerJobResult> {
    const tag = tagOfJob(businessOf(job));
    const context = this.contextOf(tag);
    const deps = context?.deps.get(shard);
    if (context === undefined || deps === undefined) return this.waitForBusiness(job, token, tag);
    const gate = context.gate;
    if (gate.isPaused()) {
      await job.moveToDelayed(gate.pausedUntil, token);
      throw new DelayedError();
    }
    try {
      return await processTimerJob(job, token, deps);
    } catch (error) {
      // The timer's call paused its business (a 429, refused credentials): it waits, no attempt used.
      if (!(error instanceof BusinessPaused)) throw error;
      await job.moveToDelayed(Math.max(gate.pausedUntil, Date.now() + error.ms), token);
      throw new DelayedError();
    }
  }

  /** The metrics a job is counted on: its business's (a batch: its first event's). */
  metricsOf(job: Job | undefined): WorkerMetrics | undefined {
    const context = this.contextOf(tagOfJob(businessOf(job)));
    return context === undefined ? undefined : this.viewFor(context.business.id);
  }

  /** Writes the shadow rules counts still in memory (the worker's close, before its connections go). */
  async flushShadow(): Promise<void> {
    await Promise.all([...this.shadows].map((shadow) => shadow.flush()));
  }

  status(): BusinessStatus[] {
    const now = Date.now();
    return [...this.contexts.values()].map(({ business, gate }) => ({
      id: business.id,
      pausedForMs: Math.max(0, gate.pausedUntil - now),
      pauseReason: gate.pausedUntil > now ? gate.pauseReason : null,
      running: gate.running,
    }));
  }

  /**
   * Counts what the queues hold for namings no business here holds, and says it: a count and the
   * one fix per naming (at start, and after a reload). A failure to count is logged, never thrown.
   */
  async recountHeld(): Promise<void> {
    const served = new Set([...this.byTag.keys(), ...this.retired.keys()]);
    try {
      const held = await this.held.recount(served);
      const { complete } = this.held.snapshot();
      for (const [tag, count] of held) {
        this.shared.log.warn(
          { heldFor: heldName(tag), events: count.events, timers: count.timers },
          `${complete ? '' : 'at least '}${describeHeldCount(count)} of ${heldName(tag)} wait in Redis, held: this config has no such business. Nothing is dropped; to run them, ${heldFix(tag)}`,
        );
      }
    } catch (error) {
      this.shared.log.warn(
        { err: String(error) },
        'could not count the jobs held for businesses this config does not have',
      );
    }
  }

  /** Who runs the jobs of a naming: the business holding it, or one a reload removed. */
  private contextOf(tag: string): BusinessContext | undefined {
    return this.byTag.get(tag) ?? this.retired.get(tag);
  }

  /** What a shard's batches run with: each event's business context, gate, and what they share. */
  private batchDepsFor(shard: number): BatchDeps {
    let made = this.batches.get(shard);
    if (made === undefined) {
      const { redis, layout, consumed, ttls } = this.shared;
      const queues = consumed.find((q) => q.shard.index === shard) ?? (consumed[0] as ShardQueues);
      made = {
        shared: {
          redis,
          // The shard's event keys are the same for every naming.
          keys: (layout.all[shard] ?? layout.all[0])?.keys ?? layout.global,
          eventsQueue: queues.events,
          ttls,
        },
        of: (tag) => this.contextOf(tag)?.deps.get(shard),
        hold: (job, tags) => this.holdEvents(job, tags),
      };
      this.batches.set(shard, made);
    }
    return made;
  }

  /** A batch with events of namings no business here holds: recorded, and said once a minute per naming. */
  private async holdEvents(job: Job, tags: readonly string[]): Promise<void> {
    for (const tag of tags) {
      this.warnHeld(tag, job.id, 'events');
      await this.held.hold(tag, 'events', job);
    }
  }

  /** A timer of a naming no business here holds waits in the delayed set until one does. */
  private async waitForBusiness(job: Job, token: string | undefined, tag: string): Promise<never> {
    this.warnHeld(tag, job.id, 'timers');
    await job.moveToDelayed(Date.now() + UNKNOWN_BUSINESS_RECHECK_MS, token);
    await this.held.hold(tag, 'timers', job);
    throw new DelayedError();
  }

  private warnHeld(tag: string, jobId: string | undefined, queue: 'events' | 'timers'): void {
    const now = Date.now();
    const key = `${queue}\u0000${tag}`;
    if (now - (this.warnedAt.get(key) ?? 0) <= 60_000) return;
    this.warnedAt.set(key, now);
    this.shared.log.warn(
      { jobId, heldFor: heldName(tag) },
      `${queue === 'events' ? 'events' : 'a timer'} of ${heldName(tag)} held: this bridge's config has no such business. They are kept, not dropped, and run at once when it has: ${heldFix(tag)}`,
    );
  }

  private contextFor(business: WorkerBusiness): BusinessContext {
    const { shared } = this;
    const { id, naming } = business;
    const layout = shared.layout.forNaming(naming);
    const metrics = this.viewFor(id);
    const gate =
      this.gates.get(id) ??
      new BusinessGate(id, shared.settings.businessConcurrency, shared.settings.concurrency);
    this.gates.set(id, gate);
    const log = shared.log.child({ business: id });
    const recorder = business.makeRecorder?.(shared.redis, layout.global);
    const shadow = business.shadow
      ? createShadowObserver({
          redis: shared.redis,
          keys: layout.global,
          candidate: business.shadow,
          metrics: metrics
            ? { differences: metrics.shadowDifferences, events: metrics.shadowEvents }
            : undefined,
          log,
        })
      : undefined;
    if (shadow) this.shadows.add(shadow);
    const observe: ObservePort = {
      ...processorHooks(metrics),
      log,
      ...(recorder ? { recorder } : {}),
      ...(shadow ? { shadow } : {}),
      ...(shared.story ? { story: shared.story } : {}),
    };
    const actionsOf = (timers: ProcessorPorts['actions']['timers']): ProcessorPorts['actions'] => ({
      platform: business.platform,
      classifyPlatformError: business.classifyPlatformError,
      forwarder: business.forwarder,
      timers,
    });
    const jobs: ProcessorPorts['jobs'] = {
      slots: shared.slots,
      gate,
      failurePolicy: {
        redis: shared.redis,
        keys: layout.global,
        deadLetterSeconds: shared.ttls.deadLetterSeconds,
        // A 429 or a credentials failure pauses this business alone when others share the
        // process (its gate); a business served alone pauses every shard's queues: they all
        // call its platform.
        queues: shared.allQueues,
        settings: shared.settings,
        log,
        onPause: (reason) => {
          metrics?.pauses.inc({ reason });
          // The credentials alarm as a metric: 1 from the first 401/403 until a platform call
          // succeeds again (compose-worker.ts sets it back to 0).
          if (reason === 'auth') metrics?.authFailing.set(1);
        },
        onDeadLetter: (entry) => metrics?.deadLetters.inc({ queue: entry.queue, code: entry.code }),
        pauseBusiness: (ms: number, reason: PauseReason) => gate.pauseAmongOthers(ms, reason),
      },
    };
    const clock = { now: shared.now, settings: shared.settings };
    const deps = new Map<number, ProcessorPorts>();
    for (const q of shared.consumed) {
      const keys = (layout.all[q.shard.index] ?? layout.all[0])?.keys ?? layout.global;
      const store = {
        redis: shared.redis,
        keys,
        ttls: shared.ttls,
        eventsQueue: q.events,
        timersQueue: q.timers,
      };
      const timers = createTimerScheduler(
        shared.redis,
        keys,
        q.timers,
        shared.now,
        shared.ttls.conversationSeconds,
      );
      deps.set(q.shard.index, {
        store,
        actions: actionsOf(timers),
        rules: business.rules,
        clock,
        observe,
        jobs,
      });
    }
    return { business, deps, gate };
  }

  private viewFor(id: string): WorkerMetrics | undefined {
    return this.metrics?.forBusiness(id);
  }
}

/** Who a naming tag's held jobs belong to, in words. */
function heldName(tag: string): string {
  return tag === '' ? 'the single business (a config without businesses:)' : `business "${tag}"`;
}

/** The one fix for jobs held for a naming. */
export function heldFix(tag: string): string {
  return tag === ''
    ? `give one business takes_over: ${SINGLE_BUSINESS_ID} (the one that was the single business), or go back to a config without businesses:`
    : `add business ${tag} back to the config (a hot reload runs them at once)`;
}

function businessOf(job: Job | undefined): unknown {
  const data: unknown = job?.data;
  return data !== null && typeof data === 'object' ? (data as { business?: unknown }).business : undefined;
}

/** The hooks that feed the metrics from a processor context. */
function processorHooks(
  metrics: WorkerMetrics | undefined,
): Pick<ObservePort, 'onRetry' | 'onAction' | 'onWindowBlocked' | 'onPlan' | 'onPlanFrozen'> {
  return {
    onRetry: () => metrics?.jobs.inc({ queue: 'events', outcome: 'retried' }),
    onAction: (report) => metrics?.actions.inc({ rule: report.rule, type: report.type, state: report.state }),
    onWindowBlocked: (action) => metrics?.windowBlocked.inc({ rule: action.rule }),
    onPlan: (plan, kind) => {
      for (const matched of plan.matched) metrics?.rulesMatched.inc({ rule: matched.rule, kind });
    },
    // Replies replaced by when_closed at planning time; the ones blocked at sending
    // time are counted by onWindowBlocked.
    onPlanFrozen: (plan) => {
      for (const blocked of plan.blockedReplies) metrics?.windowBlocked.inc({ rule: blocked.rule });
    },
  };
}

export type { EventRecorder };
