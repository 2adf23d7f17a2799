import { setTimeout as sleep } from 'node:timers/promises';
import { createSeededRandom } from '../../../src/emulator/seeded-random.js';
import type { AdminRequest } from '../support/admin-client.js';
import { eventKeyOf, type SentMessage } from '../support/expectations.js';
import { createFaultWorld, FAULTS, type FaultWorld } from '../support/fault-world.js';
import { check, percentile, type Scenario, seconds } from '../support/scenario.js';
import { createConversations, planTraffic, sendMessages } from '../support/traffic.js';
import { actionFigures, actionProblems, verifyActions } from '../support/verify-actions.js';

/** The ledger's fields in an event's run hash (src/worker/exactly-once/run-state.ts). */
const LEDGER_FIELD = 'a:';
/** The platform acts on a note or send, then holds its answer this long. */
const ANSWER_LATENCY_MS = 250;
/** Kills tried for one counted kill: one that lands outside a note or send is tried again. */
const TRIES_PER_KILL = 10;

interface Kill {
  at: number;
  /** Kills tried until one landed between "acted" and "recorded" (1 when the first did). */
  tries: number;
  /**
   * Note and send calls the platform performed whose caller was gone when the answer was ready
   * (emulator), in conversations whose ledger said `started`, not `done`, right after the kill.
   */
  landed: string[];
  /** Jobs of the events queue that were running (on either worker) when the kill landed. */
  inFlight: string[];
  /** From the kill until the replacement process said "worker started". */
  replacedMs: number;
  /** From the kill until every job that was in flight had completed (by any worker). */
  recoveredMs: number | null;
}

/** Ledger states of the runs of `messages` (read right after a kill, before any takeover). */
async function ledgerSnapshot(world: FaultWorld, messages: readonly SentMessage[]) {
  const pipeline = world.redis.pipeline();
  for (const m of messages) pipeline.hgetall(world.keys.run(eventKeyOf(m)));
  const rows = (await pipeline.exec()) ?? [];
  const states = new Map<string, string[]>();
  messages.forEach((m, i) => {
    const hash = (rows[i]?.[1] ?? {}) as Record<string, string>;
    for (const [field, value] of Object.entries(hash)) {
      if (!field.startsWith(LEDGER_FIELD)) continue;
      const state = (JSON.parse(value) as { state?: string }).state ?? '?';
      states.set(m.conversationId, [...(states.get(m.conversationId) ?? []), state]);
    }
  });
  return states;
}

/**
 * Calls the platform performed (note, send) across the kill: arrived before it, answer ready
 * after it, and by then the caller was gone.
 */
function actedCallerGone(requests: readonly AdminRequest[], killedAt: number): AdminRequest[] {
  return requests.filter(
    (r) =>
      r.callerGone &&
      (r.endpoint === 'note' || r.endpoint === 'send') &&
      r.httpStatus === 200 &&
      r.rc === null &&
      Date.parse(r.at) <= killedAt &&
      Date.parse(r.at) + r.durationMs >= killedAt,
  );
}

const conversationOf = (r: AdminRequest) => (r.body as { conversation_id?: string } | null)?.conversation_id;

/**
 * 2. Killed workers: two `work` processes (and one `serve`); at random moments one of them is
 * killed with SIGKILL and replaced, 20 times (reduced: 5), while traffic flows and the platform
 * answers slowly enough that kills land mid-call. Short lock and stall settings make recovery
 * quick. Notes and replies must be there exactly once, each forward must carry one webhook-id per
 * action (a forward repeated after a kill is the same message), and nothing is dead-lettered.
 */
export const killedWorkers: Scenario = {
  id: 2,
  name: 'Killed workers',
  budgetMs: (scale) => (scale === 'full' ? 15 * 60_000 : 150_000),
  async run(scale, { log, signal }) {
    const kills = scale === 'full' ? 20 : 5;
    const events = scale === 'full' ? 2_000 : 400;
    // Slow enough that the traffic outlasts every kill (a kill and its replacement take about 2 s).
    const rate = scale === 'full' ? 20 : 10;
    const plan = planTraffic({ events, perConversation: 4, seed: 303, stem: 'kw' });
    const world = await createFaultWorld({
      config: {
        hours: 'open',
        worker: {
          lock_duration: '2s',
          stalled_interval: '1s',
          concurrency: 8,
          backoff: '{ base: 200ms, max: 2s }',
        },
      },
      processes: ['serve', 'work', 'work'],
      randomSeed: 303,
      signal,
    });
    try {
      // Slow platform answers (the work is done first, then the answer waits), so that a kill
      // often lands between "the platform acted" and "the ledger says done".
      await world.admin.addFault({
        type: 'latency',
        endpoint: 'note',
        latencyMs: ANSWER_LATENCY_MS,
        mode: 'after',
      });
      await world.admin.addFault({
        type: 'latency',
        endpoint: 'send',
        latencyMs: ANSWER_LATENCY_MS,
        mode: 'after',
      });
      await world.admin.addFault({ type: 'latency', endpoint: 'needHuman', latencyMs: 60 });
      await createConversations(world.admin, plan.conversations);

      // The traffic goes out at one steady rate; the kills come one after another while it flows,
      // each once a note or send is being called (the ledger says `started` for a recent event),
      // at a random worker. A kill that finds no such call on its victim is tried again.
      const random = createSeededRandom(304);
      const done: Kill[] = [];
      const recoveries: Promise<void>[] = [];
      const active = `${FAULTS.prefix}:events:active`;
      const completed = `${FAULTS.prefix}:events:completed`;
      const live: SentMessage[] = [];
      let sendingDone = false;
      const sending = sendMessages(world.admin, plan.messages, {
        concurrency: 8,
        ratePerSecond: rate,
        onSent: (message) => live.push(message),
      }).finally(() => {
        sendingDone = true;
      });
      const gapMs = ((plan.messages.length / rate) * 1000) / (kills * 2);
      let missed = 0;
      const replacements: Promise<void>[] = [];
      for (let k = 0; k < kills && !sendingDone; k++) {
        await sleep(gapMs * random());
        let kill: Kill | undefined;
        for (let tries = 1; tries <= TRIES_PER_KILL && !kill && !sendingDone; tries++) {
          // A call in flight: a recent event's ledger says `started` (its note or send has begun).
          await world.waitUntil(
            async () => {
              const ledger = await ledgerSnapshot(world, live.slice(-40));
              const calling = [...ledger.values()].filter((states) => states.includes('started')).length;
              return (calling >= 2 && world.running('work').length > 0) || sendingDone;
            },
            { timeoutMs: 30_000, intervalMs: 10, what: `a note or send in flight before kill ${k + 1}` },
          );
          if (sendingDone) break;
          const inFlight = await world.redis.lrange(active, 0, -1);
          const workers = world.running('work');
          const victim = workers[Math.floor(random() * workers.length)];
          if (!victim) throw new Error('no worker running to kill');
          const at = Date.now();
          await victim.stop('SIGKILL');
          // Right after the kill (the lock keeps the other worker off the job for a while): what
          // the ledger says; then what the platform did meanwhile (logged once it would answer).
          const ledger = await ledgerSnapshot(world, live.slice(-80));
          await sleep(ANSWER_LATENCY_MS + 300);
          const gone = actedCallerGone(await world.admin.requests(2_000), at);
          const landed = gone
            .map(conversationOf)
            .filter(
              (id): id is string =>
                id !== undefined &&
                (ledger.get(id) ?? []).includes('started') &&
                !(ledger.get(id) ?? []).includes('done'),
            );
          const counted: Kill = { at, tries, landed, inFlight, replacedMs: 0, recoveredMs: null };
          // Not awaited: the next try may come while the replacement starts (about 2 s).
          replacements.push(
            world.launch('work').then(() => {
              counted.replacedMs = Date.now() - at;
            }),
          );
          if (landed.length > 0) {
            kill = counted;
            recoveries.push(
              world
                .waitUntil(
                  async () => {
                    const scores = await Promise.all(inFlight.map((id) => world.redis.zscore(completed, id)));
                    return scores.every((score) => score !== null);
                  },
                  {
                    timeoutMs: 60_000,
                    intervalMs: 100,
                    what: `the jobs in flight at kill ${k + 1} to complete`,
                  },
                )
                .then(
                  () => {
                    counted.recoveredMs = Date.now() - at;
                  },
                  () => undefined,
                ),
            );
          } else missed += 1;
        }
        if (kill) {
          done.push(kill);
          log(
            `kill ${k + 1}/${kills}: try ${kill.tries}, ${kill.inFlight.length} jobs in flight, acted but not recorded in ${kill.landed.join(', ')}`,
          );
        }
      }
      const sent = await sending;
      await Promise.all(replacements);
      await Promise.all(recoveries);
      await world.settle(60_000 + events * 40, 'the bridge to finish every event');
      const result = await verifyActions(world, sent, 'open');

      const problems = actionProblems(result, { resentAllowed: true });
      const recovered = done.map((k) => k.recoveredMs).filter((ms): ms is number => ms !== null);
      check(
        problems,
        recovered.length === done.length,
        `${done.length - recovered.length} kill(s) never recovered`,
      );
      // Each counted kill is proven from both sides: the platform acted on a note or send whose
      // caller was gone, and the ledger said `started` (not `done`) for it right after the kill.
      check(
        problems,
        done.length === kills,
        `only ${done.length} of ${kills} kills landed between "acted" and "recorded" (${missed} kills tried that did not)`,
      );
      const replaced = done.map((k) => k.replacedMs);
      return {
        scale: `${sent.length} events, ${plan.conversations.length} conversations, ${kills} kills`,
        figures: {
          kills: `${done.length} between "acted" and "recorded" (${done.reduce((n, k) => n + k.landed.length, 0)} calls; ${missed} more kills landed elsewhere; ${done.reduce((n, k) => n + k.inFlight.length, 0)} jobs in flight)`,
          'recovery p50/max': `${seconds(percentile(recovered, 50))}/${seconds(Math.max(0, ...recovered))}`,
          'replacement up p50': seconds(percentile(replaced, 50)),
          ...actionFigures(result),
        },
        expected:
          'every kill lands between "acted" (platform) and "recorded" (ledger); notes and replies once, one forward id per action, every kill recovered, 0 dead letters',
        passed: problems.length === 0,
        problems,
        worst: {
          'slowest recovery after a kill': seconds(Math.max(0, ...recovered)),
          'most jobs in flight at a kill': Math.max(0, ...done.map((k) => k.inFlight.length)),
        },
      };
    } finally {
      await world.close();
    }
  },
};
