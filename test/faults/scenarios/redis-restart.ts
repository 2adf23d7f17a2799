import { setTimeout as sleep } from 'node:timers/promises';
import type { AdminDelivery } from '../support/admin-client.js';
import type { SentMessage } from '../support/expectations.js';
import { createFaultWorld, FAULTS } from '../support/fault-world.js';
import { check, percentile, type Scenario, seconds } from '../support/scenario.js';
import { byConversation, createConversations, planTraffic, sendMessages } from '../support/traffic.js';
import { actionFigures, actionProblems, verifyActions } from '../support/verify-actions.js';

interface Outage {
  killedAt: number;
  restartedAt: number;
  /** From the restart until the workers completed a job again. */
  resumedMs: number | null;
}

const OUTAGE_MS = 8_000;
/** Webhook retries 2 s, 5 s and 10 s apart: the last attempt comes well after an 8 s outage. */
const RETRY_DELAYS: readonly [number, number, number] = [2_000, 5_000, 10_000];
/** How quickly the receiver must give up on Redis and answer 503 (enqueue_timeout 2 s, plus a busy machine). */
const UNAVAILABLE_ANSWER_LIMIT_MS = 3_000;

/**
 * 3. Redis killed with SIGKILL and restarted (append-only file on) while events flow. While it is
 * down the receiver answers 503 (measured from the platform's delivery log) and the platform's
 * retries land later. Every event the platform saw acknowledged must have its actions done after
 * the restart; deliveries the platform gave up on after 4 attempts are reported on their own.
 */
export const redisRestart: Scenario = {
  id: 3,
  name: 'Redis restart',
  budgetMs: (scale) => (scale === 'full' ? 12 * 60_000 : 150_000),
  async run(scale, { log, signal }) {
    const outages = scale === 'full' ? 3 : 1;
    const events = scale === 'full' ? 1_800 : 450;
    const rate = 25;
    const plan = planTraffic({ events, perConversation: 3, seed: 505, stem: 'rr' });
    const world = await createFaultWorld({
      config: {
        hours: 'open',
        worker: { lock_duration: '5s', stalled_interval: '2s', backoff: '{ base: 200ms, max: 2s }' },
      },
      processes: ['serve', 'work', 'work'],
      randomSeed: 505,
      webhookRetryDelaysMs: RETRY_DELAYS,
      signal,
    });
    try {
      await createConversations(world.admin, plan.conversations);
      const trafficMs = (events / rate) * 1000;
      const started = Date.now();
      const sending = sendMessages(world.admin, plan.messages, { concurrency: 8, ratePerSecond: rate });
      const done: Outage[] = [];
      for (let n = 0; n < outages; n++) {
        // Outages spread over the traffic, each starting a third of the way into its slot.
        const slot = trafficMs / outages;
        const due = started + slot * n + slot / 3;
        if (due > Date.now()) await sleep(due - Date.now());
        const killedAt = Date.now();
        await world.redisServer.kill('SIGKILL');
        log(`redis killed (outage ${n + 1}/${outages})`);
        await sleep(OUTAGE_MS);
        await world.redisServer.restart();
        const outage: Outage = { killedAt, restartedAt: Date.now(), resumedMs: null };
        done.push(outage);
        const completedKey = `${FAULTS.prefix}:events:completed`;
        const before = await world.redis.zcard(completedKey);
        await world.waitUntil(async () => (await world.redis.zcard(completedKey)) > before, {
          timeoutMs: 60_000,
          intervalMs: 50,
          what: 'the workers to complete a job after the restart',
        });
        outage.resumedMs = Date.now() - outage.restartedAt;
        log(
          `redis restarted after ${outage.restartedAt - killedAt} ms; jobs completing again ${outage.resumedMs} ms later`,
        );
      }
      const sent = await sending;
      await world.settle(90_000 + events * 40, 'the bridge to finish every event after the restarts');

      const deliveries = await world.admin.deliveries();
      const byMessage = new Map<string, AdminDelivery>(deliveries.map((d) => [d.payload.message.id, d]));
      const acked: SentMessage[] = [];
      const givenUp: SentMessage[] = [];
      for (const message of sent) {
        const delivery = byMessage.get(message.messageId);
        if (delivery?.state === 'delivered') acked.push(message);
        else givenUp.push(message);
      }
      // A conversation with a delivery the platform gave up on is left out of the exact count
      // (that event may or may not have been stored); every acknowledged event elsewhere is checked.
      const unsure = new Set(givenUp.map((m) => m.conversationId));
      const checked = [...byConversation(acked).keys()].filter((id) => !unsure.has(id));
      const result = await verifyActions(world, acked, 'open', checked);

      const attempts = deliveries.flatMap((d) => d.attempts);
      const unavailable = attempts.filter((a) => a.httpStatus === 503);
      const noAnswer = attempts.filter((a) => a.httpStatus === null);
      const answerTimes = unavailable.map((a) => a.durationMs);
      const retriedThenAcked = deliveries.filter((d) => d.state === 'delivered' && d.attempts.length > 1);
      const problems = actionProblems(result, { resentAllowed: true });
      check(
        problems,
        givenUp.length === 0,
        `${givenUp.length} deliveries given up after 4 attempts (not acknowledged)`,
      );
      check(problems, unavailable.length > 0, 'no delivery was answered 503 while Redis was down');
      check(
        problems,
        Math.max(0, ...answerTimes) <= UNAVAILABLE_ANSWER_LIMIT_MS,
        `the slowest 503 took ${Math.max(...answerTimes)} ms (limit ${UNAVAILABLE_ANSWER_LIMIT_MS} ms)`,
      );
      check(problems, noAnswer.length === 0, `${noAnswer.length} webhook attempts got no answer at all`);
      return {
        scale: `${sent.length} events, ${plan.conversations.length} conversations, ${outages} x ${seconds(OUTAGE_MS)} outage`,
        figures: {
          '503 answers': `${unavailable.length} (p50 ${percentile(answerTimes, 50)} ms, max ${Math.max(0, ...answerTimes)} ms)`,
          'no answer': noAnswer.length,
          'retried, then acked': retriedThenAcked.length,
          'given up (not acked)': givenUp.length,
          'acked events checked': `${acked.filter((m) => !unsure.has(m.conversationId)).length}/${acked.length}`,
          'jobs completing again after restart': done.map((o) => seconds(o.resumedMs ?? 0)).join(', '),
          ...actionFigures(result),
        },
        expected: `503 within ${seconds(UNAVAILABLE_ANSWER_LIMIT_MS)}, retries land later, 0 given up, every acked event's actions done once`,
        passed: problems.length === 0,
        problems,
        worst: {
          'slowest 503 answer': `${Math.max(0, ...answerTimes)} ms`,
          'most attempts of one delivery': Math.max(0, ...deliveries.map((d) => d.attempts.length)),
          'slowest resume after a restart': seconds(Math.max(0, ...done.map((o) => o.resumedMs ?? 0))),
        },
      };
    } finally {
      await world.close();
    }
  },
};
