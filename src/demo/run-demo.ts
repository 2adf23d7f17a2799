import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import got from 'got';
import { Redis } from 'ioredis';
import pino from 'pino';
import { describeError } from '../base/errors.js';
import { waitFor } from '../base/wait-for.js';
import { formatWib } from '../base/wib-time.js';
import { ADMIN_BASE_PATH } from '../bridge/admin-routes.js';
import { type RunningBridge, runBridge } from '../bridge/run-bridge.js';
import { loadConfig } from '../config/load-config.js';
import type { ActiveFault } from '../emulator/faults.js';
import { type EmulatorHandle, startEmulator } from '../emulator/start-emulator.js';
import { createLogger } from '../observe/logger.js';
import { bridgeKeys, QUEUE_NAMES } from '../queue/redis-keys.js';
import { countDeadLetters } from '../worker/failures/dead-letters.js';
import { type CrmSink, startCrmSink } from './crm-sink.js';
import { createDemoClock } from './demo-clock.js';
import { DemoError } from './demo-error.js';
import { type DemoMorning, pickDemoMorning } from './demo-morning.js';
import { createDemoProgress } from './demo-progress.js';
import {
  DEMO_CONVERSATIONS,
  DEMO_STEPS,
  type DemoConversation,
  type DemoStep,
  ESCALATION_RULE,
} from './demo-script.js';
import { parsePrometheusText, sumMetric } from './prometheus-text.js';
import { type DemoRedis, provideRedis } from './provide-redis.js';
import { type DemoTotals, renderReport } from './render-report.js';
import { type ConversationReport, observeConversation } from './verify-outcome.js';

/**
 * `convo-bridge demo`: the first ten minutes of a new user. Starts Redis (or uses REDIS_URL), the
 * platform emulator, a CRM sink and the bridge with config/demo.yaml, plays the scripted morning
 * (demo-script.ts) on a simulated clock, then reads what happened from the emulator and the CRM
 * and checks that every expected action happened exactly once.
 */
export interface RunDemoOptions {
  /** Keep everything running after the report until `waitForStop` resolves. */
  keep: boolean;
  /** The bridge's port (default: any free one). */
  port?: number;
  /** Terminal width the final table should fit (none: full width). */
  columns?: number;
  /** Show a progress bar (else one plain line per step). */
  progressBar: boolean;
  /** REDIS_URL is read from here. */
  env: NodeJS.ProcessEnv;
  stdout: (text: string) => void;
  /** With `keep`: resolves when the user asks to stop (Ctrl+C). */
  waitForStop?: () => Promise<unknown>;
  /** Aborted on Ctrl+C during the run: remaining steps are skipped, everything is stopped. */
  signal?: AbortSignal;
  /** The config to run (default: config/demo.yaml of this package). */
  configPath?: string;
  realNow?: () => number;
}

export interface DemoResult {
  ok: boolean;
  problems: string[];
  conversations: ConversationReport[];
  /** Null when the run was interrupted before it could be checked. */
  totals: DemoTotals | null;
}

/** Seed of the emulator's fault RNG: with it, the 503-after-send fault hits the same sends every run. */
export const DEMO_FAULT_SEED = 20_260_411;
const STEP_TIMEOUT_MS = 30_000;
/** A cancelled timer counts as cancelled once it is this long past due without having fired. */
const TIMER_GRACE_MS = 3_000;
const WEBHOOK_EVENTS = {
  customer: 'channel.message_in',
  ai: 'ai.message_generated',
  agent: 'agent.message_out',
};

export const DEFAULT_DEMO_CONFIG = fileURLToPath(new URL('../../config/demo.yaml', import.meta.url));

const secret = (bytes = 12) => randomBytes(bytes).toString('hex');

function conversationOf(id: string): DemoConversation {
  const conversation = DEMO_CONVERSATIONS.find((c) => c.id === id);
  if (!conversation)
    throw new DemoError('DEMO_SCRIPT_INVALID', `the script names an unknown conversation ${id}`);
  return conversation;
}

/** The escalation timer's delay from the config: the script needs one that fires during the run. */
function escalationTimerMs(rules: readonly { name: string; actions: readonly { type: string }[] }[]): number {
  const rule = rules.find((r) => r.name === ESCALATION_RULE);
  const timer = rule?.actions.find((a): a is { type: 'after'; delayMs: number } => a.type === 'after');
  if (!timer || timer.delayMs > 60_000) {
    throw new DemoError(
      'DEMO_SCRIPT_INVALID',
      `the demo expects rule ${ESCALATION_RULE} in config/demo.yaml to have an \`after:\` timer of at most 60s ` +
        '(it waits for it to fire): restore `after: 20s`',
    );
  }
  return timer.delayMs;
}

async function queueIdle(queue: Queue): Promise<boolean> {
  const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children');
  return Object.values(counts).every((n) => n === 0);
}

function describeStep(step: DemoStep, simNow: Date): string {
  const time = formatWib(simNow).slice(5, 16);
  switch (step.kind) {
    case 'customer': {
      const c = conversationOf(step.conversation);
      return `${time} ${c.channelLabel} · ${c.label}: "${step.text}"`;
    }
    case 'ai':
      return `${time} AI → ${conversationOf(step.conversation).label}: "${step.text}"`;
    case 'agent':
      return `${time} ${step.agent} takes over ${conversationOf(step.conversation).label}: "${step.text}"`;
    case 'redeliver':
      return `platform redelivers ${WEBHOOK_EVENTS[step.event]} of ${conversationOf(step.conversation).label}`;
    case 'fault':
      return `fault armed: ${step.what}`;
    case 'crm-hiccup':
      return `the CRM will answer the next ${step.count} forward(s) with 503`;
  }
}

async function readWarnings(logFile: string): Promise<{ message: string; count: number }[]> {
  const text = await readFile(logFile, 'utf8').catch(() => '');
  const counts = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const entry = JSON.parse(line) as { level?: number; msg?: string };
      if ((entry.level ?? 0) >= 40) {
        const message = (entry.msg ?? '(no message)').split('\n')[0] ?? '';
        counts.set(message, (counts.get(message) ?? 0) + 1);
      }
    } catch {
      // A line that is not JSON is not ours to summarise.
    }
  }
  return [...counts].map(([message, count]) => ({ message, count })).sort((a, b) => b.count - a.count);
}

export async function runDemo(options: RunDemoOptions): Promise<DemoResult> {
  const out = options.stdout;
  const realNow = options.realNow ?? Date.now;
  const startedAt = Date.now();
  const configPath = options.configPath ?? DEFAULT_DEMO_CONFIG;
  const cleanups: (() => Promise<unknown>)[] = [];
  const cleanup = async () => {
    for (const step of cleanups.reverse()) await step().catch(() => undefined);
    cleanups.length = 0;
  };

  try {
    const redis: DemoRedis = await provideRedis(options.env);
    cleanups.push(() => redis.stop());
    const prefix = `cb-demo-${secret(4)}`;
    // Cleanups run in reverse: the bridge stops first, then the emulator and the CRM sink, then the
    // demo's own Redis connection (deleting the run's keys from a shared Redis), then Redis itself.
    const control = new Redis(redis.url, { maxRetriesPerRequest: null });
    control.on('error', () => {});
    cleanups.push(async () => {
      if (redis.source === 'REDIS_URL') await deleteKeys(control, `${prefix}:`);
      await control.quit();
    });
    const eventsQueue = new Queue(QUEUE_NAMES.events, { connection: control, prefix });
    const timersQueue = new Queue(QUEUE_NAMES.timers, { connection: control, prefix });
    cleanups.push(() => Promise.all([eventsQueue.close(), timersQueue.close()]));
    const workDir = await mkdtemp(join(tmpdir(), 'convo-bridge-demo-'));
    const logFile = join(workDir, 'bridge.log');
    // The folder (the bridge's log) goes when the demo ends well; a failed run keeps it to be read.
    // Pushed before the bridge's cleanup, so it runs after the bridge has stopped writing.
    let keepWorkDir = true;
    cleanups.push(async () => {
      if (!keepWorkDir) await rm(workDir, { recursive: true, force: true });
    });
    const credentials = {
      businessId: 'toko-maju',
      secret: secret(),
      webhookSecret: secret(),
      crmSecret: secret(16),
      adminPassword: secret(6),
    };

    // The config is read once up front for what the script depends on (holidays, the timer).
    const baseEnv: NodeJS.ProcessEnv = {
      PLATFORM_FORM: 'current',
      BUSINESS_ID: credentials.businessId,
      SECRET_KEY: credentials.secret,
      PORT: String(options.port ?? 0),
      WEBHOOK_SECRET: credentials.webhookSecret,
      REDIS_URL: redis.url,
      REDIS_PREFIX: prefix,
      ADMIN_PASSWORD: credentials.adminPassword,
      LOG_LEVEL: 'info',
      CRM_SECRET: credentials.crmSecret,
    };
    const preview = await loadConfig(configPath, { env: baseEnv });
    const timerMs = escalationTimerMs(preview.config.rules);
    const morning: DemoMorning = pickDemoMorning(realNow(), {
      holidays: preview.config.businessHours?.holidays ?? [],
    });
    const clock = createDemoClock(morning.at('07:35', -1), realNow);

    let emulator: EmulatorHandle;
    try {
      emulator = await startEmulator({
        businessId: credentials.businessId,
        secret: credentials.secret,
        businessName: 'Toko Maju',
        form: 'current',
        now: clock.now,
        seed: DEMO_FAULT_SEED,
        webhookRetryDelaysMs: [250, 500, 1000],
      });
    } catch (error) {
      throw new DemoError('DEMO_START_FAILED', `the emulator did not start: ${describeError(error)}`, {
        cause: error,
      });
    }
    cleanups.push(() => emulator.close());
    const crm: CrmSink = await startCrmSink({ secret: credentials.crmSecret });
    cleanups.push(() => crm.close());

    const logger = createLogger({
      level: 'info',
      pretty: false,
      destination: pino.destination({ dest: logFile, sync: true, mkdir: true }),
    });
    let bridge: RunningBridge;
    try {
      bridge = await runBridge({
        mode: 'start',
        configPath,
        env: { ...baseEnv, PLATFORM_BASE_URL: emulator.url, CRM_WEBHOOK_URL: crm.url },
        handleSignals: false,
        now: clock.date,
        logger,
      });
    } catch (error) {
      throw new DemoError(
        'DEMO_START_FAILED',
        `the bridge did not start: ${describeError(error)} (log: ${logFile})`,
        { cause: error },
      );
    }
    cleanups.push(() => bridge.stop('demo finished'));
    const bridgeUrl = bridge.url ?? '';
    const webhookUrl = `${bridgeUrl}${bridge.config.config.receiver.path}`;
    emulator.admin.setWebhook({ url: webhookUrl, secret: credentials.webhookSecret });

    out(
      `convo-bridge demo: a morning at Toko Maju on ${morning.date} (simulated clock, WIB)\n` +
        `  redis      ${redis.url} (${redis.source}${redis.source === 'REDIS_URL' ? '' : ', append-only file on'}; key prefix ${prefix})\n` +
        `  emulator   ${emulator.url}   inbox ${emulator.inboxUrl}\n` +
        `  bridge     ${webhookUrl}\n` +
        `  CRM sink   ${crm.url}\n` +
        `  bridge log ${logFile}\n\n`,
    );

    for (const conversation of DEMO_CONVERSATIONS) {
      emulator.admin.createConversation({
        id: conversation.id,
        label: conversation.label,
        channel: conversation.channel,
      });
    }

    const problems: string[] = [];
    const faultNames = new Map<string, string>();
    const certainFaults: ActiveFault[] = [];
    const timerSetAt = new Map<string, number>();
    const progress = createDemoProgress({ bar: options.progressBar, write: out });
    const timerConversations = DEMO_CONVERSATIONS.filter((c) => c.expect.timer !== null);
    progress.start(DEMO_STEPS.length + 2);

    const settle = async (what: string) => {
      await waitFor(
        async () => {
          // Ctrl+C: stop waiting, the runner winds down.
          if (options.signal?.aborted) return true;
          await emulator.admin.deliveriesSettled();
          return queueIdle(eventsQueue);
        },
        { timeoutMs: STEP_TIMEOUT_MS, intervalMs: 50, what },
      );
    };

    let interrupted = false;
    let played = 0;
    for (const [index, step] of DEMO_STEPS.entries()) {
      if (options.signal?.aborted) {
        interrupted = true;
        break;
      }
      if ('at' in step) clock.advanceTo(morning.at(step.at.time, step.at.day ?? 0));
      const line = describeStep(step, clock.date());
      try {
        playStep(step, emulator, crm, faultNames, certainFaults);
        await settle(`the bridge to finish step ${index + 1} (${line})`);
      } catch (error) {
        problems.push(`step ${index + 1} (${line}): ${describeError(error)}`);
      }
      if (step.kind === 'customer' && timerConversations.some((c) => c.id === step.conversation)) {
        if (!timerSetAt.has(step.conversation)) timerSetAt.set(step.conversation, Date.now());
      }
      progress.step(line);
      played += 1;
    }

    // The escalation timers: the unanswered one must fire, the answered one must not.
    if (!interrupted) {
      try {
        await waitFor(
          () => {
            if (options.signal?.aborted) return true;
            const now = Date.now();
            return timerConversations.every((c) => {
              const setAt = timerSetAt.get(c.id) ?? now;
              if (c.expect.timer === 'cancelled') return now >= setAt + timerMs + TIMER_GRACE_MS;
              const fired = emulator.admin
                .conversation(c.id)
                .notes.some((n) =>
                  c.expect.effects.some(
                    (e) => e.fromTimer && 'contains' in e.match && n.text.includes(e.match.contains),
                  ),
                );
              return fired;
            });
          },
          { timeoutMs: timerMs + STEP_TIMEOUT_MS, intervalMs: 100, what: 'the escalation timers to be due' },
        );
        await waitFor(async () => (await queueIdle(timersQueue)) && (await queueIdle(eventsQueue)), {
          timeoutMs: STEP_TIMEOUT_MS,
          intervalMs: 50,
          what: 'the timers and events queues to drain',
        });
      } catch (error) {
        problems.push(describeError(error));
      }
    }
    if (options.signal?.aborted) interrupted = true;
    if (interrupted) {
      progress.stop();
      out(
        `\nInterrupted (Ctrl+C) after step ${played} of ${DEMO_STEPS.length}: nothing was verified. ` +
          'Stopping the bridge, the emulator, the CRM sink and Redis...\n',
      );
      await cleanup();
      return { ok: false, problems: ['interrupted (Ctrl+C)'], conversations: [], totals: null };
    }
    progress.step(
      `escalation timers: ${timerConversations.map((c) => `${c.label} ${c.expect.timer}`).join(', ')}`,
    );

    // Read what happened from the outside.
    const requests = emulator.admin.requests();
    const deliveries = emulator.admin.deliveries();
    const crmDeliveries = crm.deliveries();
    const conversations = DEMO_CONVERSATIONS.map((conversation) =>
      observeConversation({
        conversation,
        detail: emulator.admin.conversation(conversation.id),
        requests,
        crm: crmDeliveries,
        timersDue: true,
      }),
    );
    for (const report of conversations) problems.push(...report.problems);

    const metrics = parsePrometheusText(
      await got(`${bridgeUrl}/metrics`, { timeout: { request: 5_000 }, retry: { limit: 0 } })
        .text()
        .catch(() => ''),
    );
    const callsByEndpoint: Record<string, number> = {};
    for (const r of requests)
      callsByEndpoint[r.endpoint ?? 'unknown'] = (callsByEndpoint[r.endpoint ?? 'unknown'] ?? 0) + 1;
    const faultCounts = new Map<string, number>();
    for (const r of requests) {
      for (const id of r.faults) {
        const what = faultNames.get(id) ?? id;
        faultCounts.set(what, (faultCounts.get(what) ?? 0) + 1);
      }
    }
    const allCalls = sumMetric(metrics, 'convo_bridge_platform_calls_total');
    const totals: DemoTotals = {
      webhookDeliveries: deliveries.length,
      redeliveries: deliveries.filter((d) => d.redeliveryOf !== null).length,
      webhookFailed: deliveries.filter((d) => d.state !== 'delivered').length,
      receiverQueued: sumMetric(metrics, 'convo_bridge_webhooks_total', { outcome: 'queued' }),
      receiverDuplicates: sumMetric(metrics, 'convo_bridge_webhooks_total', { outcome: 'duplicate' }),
      platformCalls: requests.length,
      callsByEndpoint,
      faults: [...faultCounts].map(([what, count]) => ({ what, count })),
      failedAttempts: allCalls - sumMetric(metrics, 'convo_bridge_platform_calls_total', { result: 'ok' }),
      jobRetries: sumMetric(metrics, 'convo_bridge_jobs_total', { outcome: 'retried' }),
      deadLetters: await countDeadLetters(control, bridgeKeys(prefix)),
      crmRequests: crmDeliveries.length,
      crmAccepted: crmDeliveries.filter((d) => d.verified && d.status === 200 && !d.duplicate).length,
      crmRetried: crmDeliveries.filter((d) => d.status === 503).length,
      crmUnsigned: crmDeliveries.filter((d) => !d.verified).length,
    };
    problems.push(...globalProblems(totals, certainFaults, requests, prefix, redis.url));
    progress.step(
      problems.length === 0 ? 'verified: everything exactly once' : `${problems.length} problem(s) found`,
    );
    progress.stop();

    const expectedActions = DEMO_CONVERSATIONS.reduce(
      (sum, c) => sum + c.expect.effects.length + (c.expect.needHuman ? 1 : 0) + c.expect.crm.length,
      0,
    );
    out(
      renderReport({
        morning: morning.date,
        conversations,
        totals,
        problems,
        expectedActions,
        links: {
          inbox: emulator.inboxUrl,
          metrics: `${bridgeUrl}/metrics`,
          queues: `${bridgeUrl}${ADMIN_BASE_PATH}`,
          adminUser: bridge.config.config.admin.username,
          adminPassword: credentials.adminPassword,
          logFile,
          tryIt: `npx convo-bridge send-test-webhook --url ${webhookUrl} --secret ${credentials.webhookSecret} --event complaint --conversation conv-budi`,
          live: options.keep,
        },
        warnings: await readWarnings(logFile),
        seconds: Math.round((Date.now() - startedAt) / 1000),
        ...(options.columns === undefined ? {} : { columns: options.columns }),
      }),
    );

    keepWorkDir = problems.length > 0;
    if (options.keep && options.waitForStop) {
      out('\nEverything keeps running. Press Ctrl+C to stop.\n');
      await options.waitForStop();
      out('Stopping: bridge (drains and finishes in-flight jobs), emulator, CRM sink, Redis...\n');
    }
    await cleanup();
    if (options.keep) out('Stopped.\n');
    return { ok: problems.length === 0, problems, conversations, totals };
  } finally {
    await cleanup();
  }
}

function playStep(
  step: DemoStep,
  emulator: EmulatorHandle,
  crm: CrmSink,
  faultNames: Map<string, string>,
  certainFaults: ActiveFault[],
): void {
  const admin = emulator.admin;
  switch (step.kind) {
    case 'customer':
      admin.customerMessage(step.conversation, {
        text: step.text,
        senderName: conversationOf(step.conversation).label,
      });
      return;
    case 'ai':
      admin.aiReply(step.conversation, step.text);
      return;
    case 'agent':
      admin.takeOver(step.conversation, step.agent);
      admin.agentReply(step.conversation, step.text, step.agent);
      return;
    case 'redeliver': {
      const event = WEBHOOK_EVENTS[step.event];
      const original = admin
        .deliveries()
        .filter((d) => d.conversationId === step.conversation && d.event === event && d.redeliveryOf === null)
        .at(-1);
      if (!original) {
        throw new DemoError(
          'DEMO_SCRIPT_INVALID',
          `no ${event} delivery of ${step.conversation} to redeliver`,
        );
      }
      admin.redeliver(original.id);
      return;
    }
    case 'fault': {
      const fault = admin.addFault(step.spec);
      faultNames.set(fault.id, step.what);
      if (fault.fraction === 1) certainFaults.push(fault);
      return;
    }
    case 'crm-hiccup':
      crm.failNext(step.count);
      return;
  }
}

function globalProblems(
  totals: DemoTotals,
  certainFaults: readonly ActiveFault[],
  requests: readonly { faults: readonly string[] }[],
  prefix: string,
  redisUrl: string,
): string[] {
  const problems: string[] = [];
  if (totals.deadLetters > 0) {
    problems.push(
      `${totals.deadLetters} dead letter(s): see \`convo-bridge dlq list --redis-url ${redisUrl} --prefix ${prefix}\` (with --keep)`,
    );
  }
  if (totals.webhookFailed > 0)
    problems.push(`${totals.webhookFailed} webhook deliveries were not accepted by the receiver`);
  if (totals.receiverDuplicates !== totals.redeliveries) {
    problems.push(
      `${totals.redeliveries} redeliveries, but the receiver recognised ${totals.receiverDuplicates} duplicates`,
    );
  }
  const firsts = totals.webhookDeliveries - totals.redeliveries;
  if (totals.receiverQueued !== firsts) {
    problems.push(`${firsts} webhook events delivered, but the receiver stored ${totals.receiverQueued}`);
  }
  for (const fault of certainFaults) {
    if (!requests.some((r) => r.faults.includes(fault.id))) {
      problems.push(`the injected fault ${fault.id} (${fault.type} on ${fault.endpoint}) never fired`);
    }
  }
  return problems;
}

/** Deletes the run's keys from a shared Redis (SCAN, never KEYS). */
async function deleteKeys(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  for (let rounds = 0; rounds < 10_000; rounds += 1) {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
    if (cursor === '0') return;
  }
}
