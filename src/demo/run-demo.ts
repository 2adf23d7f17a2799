import { readFile } from 'node:fs/promises';
import { QUEUE_DASHBOARD_PATH } from '../admin/admin-surface.js';
import { createDemoProgress } from './demo-progress.js';
import { DEMO_CONVERSATIONS, DEMO_STEPS } from './demo-script.js';
import { playMorning, TIMER_CONVERSATIONS } from './play-morning.js';
import { readOutcome } from './read-outcome.js';
import { type DemoTotals, renderReport } from './render-report.js';
import {
  DEFAULT_DEMO_CONFIG,
  type DemoCleanups,
  type DemoWorld,
  startDemoWorld,
} from './start-demo-world.js';
import type { ConversationReport } from './verify-outcome.js';

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

/**
 * `convo-bridge demo`: the first ten minutes of a new user. Starts Redis (or uses REDIS_URL), the
 * platform emulator, a CRM sink and the bridge with config/demo.yaml (start-demo-world.ts), plays
 * the scripted morning (demo-script.ts) on a simulated clock (play-morning.ts), then reads what
 * happened from the emulator and the CRM (read-outcome.ts) and checks that every expected action
 * happened exactly once.
 */
export async function runDemo(options: RunDemoOptions): Promise<DemoResult> {
  const out = options.stdout;
  const startedAt = Date.now();
  const cleanups: DemoCleanups = [];
  const cleanup = async () => {
    for (const step of cleanups.reverse()) await step().catch(() => undefined);
    cleanups.length = 0;
  };

  try {
    const world = await startDemoWorld(
      {
        env: options.env,
        ...(options.port === undefined ? {} : { port: options.port }),
        configPath: options.configPath ?? DEFAULT_DEMO_CONFIG,
        realNow: options.realNow ?? Date.now,
      },
      cleanups,
    );
    out(introduction(world));
    for (const conversation of DEMO_CONVERSATIONS) {
      world.emulator.admin.createConversation({
        id: conversation.id,
        label: conversation.label,
        channel: conversation.channel,
      });
    }

    const progress = createDemoProgress({ bar: options.progressBar, write: out });
    progress.start(DEMO_STEPS.length + 2);
    const play = await playMorning(world, progress, options.signal);
    if (play.interrupted) {
      progress.stop();
      out(
        `\nInterrupted (Ctrl+C) after step ${play.played} of ${DEMO_STEPS.length}: nothing was verified. ` +
          'Stopping the bridge, the emulator, the CRM sink and Redis...\n',
      );
      await cleanup();
      return { ok: false, problems: ['interrupted (Ctrl+C)'], conversations: [], totals: null };
    }
    progress.step(
      `escalation timers: ${TIMER_CONVERSATIONS.map((c) => `${c.label} ${c.expect.timer}`).join(', ')}`,
    );

    const { conversations, totals } = await readOutcome(world, play);
    const { problems } = play;
    progress.step(
      problems.length === 0 ? 'verified: everything exactly once' : `${problems.length} problem(s) found`,
    );
    progress.stop();
    out(
      renderReport({
        morning: world.morning.date,
        conversations,
        totals,
        problems,
        expectedActions: EXPECTED_ACTIONS,
        links: {
          inbox: world.emulator.inboxUrl,
          metrics: `${world.bridgeUrl}/metrics`,
          queues: `${world.bridgeUrl}${QUEUE_DASHBOARD_PATH}`,
          adminUser: world.bridge.config.config.admin.username,
          adminPassword: world.credentials.adminPassword,
          logFile: world.logFile,
          tryIt: `npx convo-bridge send-test-webhook --url ${world.webhookUrl} --secret ${world.credentials.webhookSecret} --event complaint --conversation conv-budi`,
          live: options.keep,
        },
        warnings: await readWarnings(world.logFile),
        seconds: Math.round((Date.now() - startedAt) / 1000),
        ...(options.columns === undefined ? {} : { columns: options.columns }),
      }),
    );

    world.workDir.keep = problems.length > 0;
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

/** Every action the script expects: notes and replies, need-human calls and CRM forwards. */
const EXPECTED_ACTIONS = DEMO_CONVERSATIONS.reduce(
  (sum, c) => sum + c.expect.effects.length + (c.expect.needHuman ? 1 : 0) + c.expect.crm.length,
  0,
);

/** The lines before the run: the morning, and where each part listens. */
function introduction(world: DemoWorld): string {
  const { morning, redis, prefix, emulator, webhookUrl, crm, logFile } = world;
  return (
    `convo-bridge demo: a morning at Toko Maju on ${morning.date} (simulated clock, WIB)\n` +
    `  redis      ${redis.url} (${redis.source}${redis.source === 'REDIS_URL' ? '' : ', append-only file on'}; key prefix ${prefix})\n` +
    `  emulator   ${emulator.url}   inbox ${emulator.inboxUrl}\n` +
    `  bridge     ${webhookUrl}\n` +
    `  CRM sink   ${crm.url}\n` +
    `  bridge log ${logFile}\n\n`
  );
}

/** The bridge's warnings and errors during the run, counted by message, most frequent first. */
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
