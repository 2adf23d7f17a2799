import { setTimeout as sleep } from 'node:timers/promises';
import { createSeededRandom } from '../../../src/emulator/seeded-random.js';
import type { SentMessage } from '../support/expectations.js';
import { createFaultWorld, FAULTS } from '../support/fault-world.js';
import { check, percentile, type Scenario, seconds } from '../support/scenario.js';
import { createConversations, planTraffic, sendMessages } from '../support/traffic.js';
import { actionFigures, actionProblems, verifyActions } from '../support/verify-actions.js';

interface Kill {
  at: number;
  /** Jobs of the events queue that were running (on either worker) when the kill landed. */
  inFlight: string[];
  /** From the kill until the replacement process said "worker started". */
  replacedMs: number;
  /** From the kill until every job that was in flight had completed (by any worker). */
  recoveredMs: number | null;
}

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
    const rate = 40;
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
      await world.admin.addFault({ type: 'latency', endpoint: 'note', latencyMs: 120, mode: 'after' });
      await world.admin.addFault({ type: 'latency', endpoint: 'send', latencyMs: 120, mode: 'after' });
      await world.admin.addFault({ type: 'latency', endpoint: 'needHuman', latencyMs: 60 });
      await createConversations(world.admin, plan.conversations);

      // The traffic goes out in one chunk per kill; each kill lands at a random moment while its
      // chunk is being worked on (and only once jobs are running), and the killed worker is
      // replaced before the next chunk.
      const random = createSeededRandom(304);
      const done: Kill[] = [];
      const recoveries: Promise<void>[] = [];
      const active = `${FAULTS.prefix}:events:active`;
      const completed = `${FAULTS.prefix}:events:completed`;
      const chunk = Math.ceil(plan.messages.length / kills);
      const sent: SentMessage[] = [];
      for (let k = 0; k < kills; k++) {
        const part = plan.messages.slice(k * chunk, (k + 1) * chunk);
        const sending = sendMessages(world.admin, part, { concurrency: 8, ratePerSecond: rate });
        await sleep((part.length / rate) * 1000 * (0.2 + 0.6 * random()));
        const inFlight = await world.waitUntil(
          async () => {
            const jobs = await world.redis.lrange(active, 0, -1);
            return jobs.length > 0 ? jobs : false;
          },
          { timeoutMs: 10_000, intervalMs: 20, what: `jobs to be running before kill ${k + 1}` },
        );
        const workers = world.running('work');
        const victim = workers[Math.floor(random() * workers.length)];
        if (!victim) throw new Error('no worker running to kill');
        const at = Date.now();
        await victim.stop('SIGKILL');
        const kill: Kill = { at, inFlight, replacedMs: 0, recoveredMs: null };
        done.push(kill);
        recoveries.push(
          world
            .waitUntil(
              async () => {
                const scores = await Promise.all(inFlight.map((id) => world.redis.zscore(completed, id)));
                return scores.every((score) => score !== null);
              },
              { timeoutMs: 60_000, intervalMs: 100, what: `the jobs in flight at kill ${k + 1} to complete` },
            )
            .then(
              () => {
                kill.recoveredMs = Date.now() - at;
              },
              () => undefined,
            ),
        );
        await world.launch('work');
        kill.replacedMs = Date.now() - at;
        log(
          `kill ${k + 1}/${kills}: ${inFlight.length} jobs in flight, replaced after ${kill.replacedMs} ms`,
        );
        sent.push(...(await sending));
      }
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
      check(problems, done.length === kills, `only ${done.length} of ${kills} kills happened`);
      const replaced = done.map((k) => k.replacedMs);
      return {
        scale: `${sent.length} events, ${plan.conversations.length} conversations, ${kills} kills`,
        figures: {
          kills: `${done.length} (${done.reduce((n, k) => n + k.inFlight.length, 0)} jobs in flight)`,
          'recovery p50/max': `${seconds(percentile(recovered, 50))}/${seconds(Math.max(0, ...recovered))}`,
          'replacement up p50': seconds(percentile(replaced, 50)),
          ...actionFigures(result),
        },
        expected: 'notes and replies once, one forward id per action, every kill recovered, 0 dead letters',
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
