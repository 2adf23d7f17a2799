import type { Queue } from 'bullmq';
import { describeError } from '../base/errors.js';
import { waitFor } from '../base/wait-for.js';
import type { ActiveFault } from '../emulator/faults.js';
import type { DemoProgress } from './demo-progress.js';
import { DEMO_CONVERSATIONS, DEMO_STEPS } from './demo-script.js';
import { describeStep, playStep } from './play-step.js';
import type { DemoWorld } from './start-demo-world.js';

const STEP_TIMEOUT_MS = 30_000;
/** A cancelled timer counts as cancelled once it is this long past due without having fired. */
const TIMER_GRACE_MS = 3_000;

/** The conversations whose escalation timer the script checks (one fires, one is cancelled). */
export const TIMER_CONVERSATIONS = DEMO_CONVERSATIONS.filter((c) => c.expect.timer !== null);

/** What playing the script left: the problems met on the way and what the outcome check needs. */
export interface MorningPlay {
  /** Steps played, of DEMO_STEPS. */
  played: number;
  /** Ctrl+C stopped the run: nothing is verified. */
  interrupted: boolean;
  problems: string[];
  /** The armed faults' ids and what the script calls them (for the report). */
  faultNames: Map<string, string>;
  /** Faults that fire every time: each must show in the request log. */
  certainFaults: ActiveFault[];
  /** When each timer conversation's customer message came (its timer is due from then). */
  timerSetAt: Map<string, number>;
}

async function queueIdle(queue: Queue): Promise<boolean> {
  const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children');
  return Object.values(counts).every((n) => n === 0);
}

/**
 * Plays the script step by step on the simulated clock, waiting after each step until the
 * webhooks are delivered and the events queue is idle, then waits for the escalation timers.
 */
export async function playMorning(
  world: DemoWorld,
  progress: DemoProgress,
  signal: AbortSignal | undefined,
): Promise<MorningPlay> {
  const { emulator, crm, clock, morning, eventsQueue } = world;
  const play: MorningPlay = {
    played: 0,
    interrupted: false,
    problems: [],
    faultNames: new Map(),
    certainFaults: [],
    timerSetAt: new Map(),
  };
  const settle = async (what: string) => {
    await waitFor(
      async () => {
        // Ctrl+C: stop waiting, the runner winds down.
        if (signal?.aborted) return true;
        await emulator.admin.deliveriesSettled();
        return queueIdle(eventsQueue);
      },
      { timeoutMs: STEP_TIMEOUT_MS, intervalMs: 50, what },
    );
  };

  for (const [index, step] of DEMO_STEPS.entries()) {
    if (signal?.aborted) {
      play.interrupted = true;
      break;
    }
    if ('at' in step) clock.advanceTo(morning.at(step.at.time, step.at.day ?? 0));
    const line = describeStep(step, clock.date());
    try {
      playStep(step, emulator, crm, play.faultNames, play.certainFaults);
      await settle(`the bridge to finish step ${index + 1} (${line})`);
    } catch (error) {
      play.problems.push(`step ${index + 1} (${line}): ${describeError(error)}`);
    }
    if (step.kind === 'customer' && TIMER_CONVERSATIONS.some((c) => c.id === step.conversation)) {
      if (!play.timerSetAt.has(step.conversation)) play.timerSetAt.set(step.conversation, Date.now());
    }
    progress.step(line);
    play.played += 1;
  }

  if (!play.interrupted) await waitForTimers(world, play, signal);
  if (signal?.aborted) play.interrupted = true;
  return play;
}

/** The escalation timers: the unanswered one must fire, the answered one must not. */
async function waitForTimers(
  world: DemoWorld,
  play: MorningPlay,
  signal: AbortSignal | undefined,
): Promise<void> {
  const { emulator, timerMs, timersQueue, eventsQueue } = world;
  try {
    await waitFor(
      () => {
        if (signal?.aborted) return true;
        const now = Date.now();
        return TIMER_CONVERSATIONS.every((c) => {
          const setAt = play.timerSetAt.get(c.id) ?? now;
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
    play.problems.push(describeError(error));
  }
}
