import { createSeededRandom } from '../../../src/emulator/seeded-random.js';
import type { AdminDelivery } from '../support/admin-client.js';
import type { SentMessage } from '../support/expectations.js';
import { createFaultWorld, FAULTS, type FaultWorld } from '../support/fault-world.js';
import { metricValue, readMetrics } from '../support/receiver-metrics.js';
import { check, type Scenario } from '../support/scenario.js';
import { createConversations, mapLimit, planTraffic, sendMessages } from '../support/traffic.js';
import { actionFigures, actionProblems, verifyActions } from '../support/verify-actions.js';

type Copies = 'twice' | 'four times' | 'four at once';

interface Redelivery {
  message: SentMessage;
  delivery: AdminDelivery;
  copies: Copies;
  /**
   * Sent once the platform showed every action of every event (all processing finished, seen
   * from outside), not while the backlog was being worked on.
   */
  afterDone: boolean;
}

/** Sends a delivery's exact payload to the receiver, as a platform retrying in parallel would. */
async function postCopy(world: FaultWorld, payload: unknown) {
  const response = await fetch(world.receiverUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: FAULTS.webhookSecret },
    body: JSON.stringify(payload),
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await response.json().catch(() => null)) as { success?: unknown } | null;
  return {
    acked: response.status === 200 && body?.success === true,
    outcome: response.headers.get('x-convo-bridge-outcome') ?? '',
  };
}

/**
 * 1. Redeliveries: the platform delivers 10% of the events again (some twice, some four times in
 * all, some four copies at the same moment) while the bridge works through the backlog.
 * Every action must happen exactly once and every copy must be acknowledged.
 */
export const redeliveries: Scenario = {
  id: 1,
  name: 'Redeliveries',
  budgetMs: (scale) => (scale === 'full' ? 15 * 60_000 : 150_000),
  async run(scale, { log, signal }) {
    const events = scale === 'full' ? 5_000 : 500;
    const plan = planTraffic({ events, perConversation: 5, seed: 101, stem: 'rd' });
    const world = await createFaultWorld({
      config: { hours: 'closed' },
      processes: ['serve', 'work', 'work'],
      randomSeed: 101,
      signal,
    });
    try {
      await createConversations(world.admin, plan.conversations);
      const sendStarted = Date.now();
      const sent = await sendMessages(world.admin, plan.messages, { concurrency: 8 });
      log(
        `${sent.length} messages in ${plan.conversations.length} conversations sent in ${Date.now() - sendStarted} ms`,
      );

      // 10% of the events are delivered again: the first half while the bridge is still working
      // through the backlog, the second half after everything was processed (the job is gone by
      // then, only the dedupe marker remembers the event).
      const deliveries = await world.admin.deliveries();
      const byMessage = new Map(deliveries.map((d) => [d.payload.message.id, d]));
      const random = createSeededRandom(202);
      const chosen = sent
        .map((message) => ({ message, key: random() }))
        .sort((a, b) => a.key - b.key)
        .slice(0, Math.round(sent.length / 10))
        .map((entry) => entry.message);
      const kinds: Copies[] = ['twice', 'twice', 'twice', 'twice', 'four times', 'four times', 'four times'];
      const plans: Redelivery[] = [];
      const direct: { acked: boolean; outcome: string }[] = [];
      let emulatorCopies = 0;
      let processingDone = false;
      const redeliver = async (message: SentMessage, i: number) => {
        const delivery = byMessage.get(message.messageId);
        if (!delivery) throw new Error(`no delivery recorded for message ${message.messageId}`);
        const copies: Copies = kinds[i % 10] ?? 'four at once';
        const afterDone = processingDone;
        plans.push({ message, delivery, copies, afterDone });
        if (copies === 'four at once') {
          direct.push(...(await Promise.all([1, 2, 3].map(() => postCopy(world, delivery.payload)))));
        } else {
          for (let n = 0; n < (copies === 'twice' ? 1 : 3); n++) {
            await world.admin.redeliver(delivery.id);
            emulatorCopies += 1;
          }
        }
      };
      const half = Math.ceil(chosen.length / 2);
      await mapLimit(chosen.slice(0, half), 8, redeliver);
      await world.settle(60_000 + events * 60, 'the bridge to finish the backlog');
      // Processing has finished when the platform and the CRM show every action of every event;
      // the second half of the copies goes out only then.
      const before = await verifyActions(world, sent, 'closed');
      const missingBefore = before.tally.missing + before.forwards.missing;
      processingDone = missingBefore === 0;
      await mapLimit(chosen.slice(half), 8, (message, i) => redeliver(message, i + half));
      log(
        `${chosen.length} events redelivered (${emulatorCopies} by the emulator, ${direct.length} posted at once)`,
      );

      await world.settle(60_000, 'the bridge to take every late copy');
      const check1 = await verifyActions(world, sent, 'closed');
      const [after, requests, metrics] = await Promise.all([
        world.admin.deliveries(),
        world.admin.requests(),
        readMetrics(world.receiverOrigin),
      ]);
      const redelivered = after.filter((d) => d.redeliveryOf !== null);
      const redeliveredAcked = redelivered.filter((d) => d.state === 'delivered').length;
      const directAcked = direct.filter((r) => r.acked).length;
      const directDuplicate = direct.filter((r) => r.outcome === 'duplicate').length;
      const platformRetries = after.reduce((sum, d) => sum + Math.max(0, d.attempts.length - 1), 0);
      const queued = metricValue(metrics, 'convo_bridge_webhooks_total', { outcome: 'queued' });
      const duplicates = metricValue(metrics, 'convo_bridge_webhooks_total', { outcome: 'duplicate' });
      const needHumanCalls = requests.filter(
        (r) => r.endpoint === 'needHuman' && r.httpStatus === 200 && r.rc === null,
      ).length;
      const complaints = sent.filter((m) => m.kind === 'complaint').length;
      const copiesPerEvent = new Map<string, number>();
      for (const d of after) {
        const id = d.payload.message.id;
        copiesPerEvent.set(id, (copiesPerEvent.get(id) ?? 0) + 1);
      }
      for (const p of plans) {
        if (p.copies === 'four at once')
          copiesPerEvent.set(p.message.messageId, (copiesPerEvent.get(p.message.messageId) ?? 0) + 3);
      }

      const problems = actionProblems(check1, { resentAllowed: false });
      check(problems, queued === sent.length, `receiver queued ${queued} events, expected ${sent.length}`);
      check(
        problems,
        redeliveredAcked === redelivered.length,
        `${redelivered.length - redeliveredAcked} emulator redeliveries not acknowledged`,
      );
      check(
        problems,
        directAcked === direct.length,
        `${direct.length - directAcked} parallel copies not acknowledged`,
      );
      check(
        problems,
        directDuplicate === direct.length,
        `${direct.length - directDuplicate} parallel copies not recognised as duplicates`,
      );
      check(
        problems,
        duplicates === emulatorCopies + direct.length,
        `receiver counted ${duplicates} duplicates for the ${emulatorCopies + direct.length} copies sent`,
      );
      // From outside: every original delivery acknowledged at its first attempt, so each event
      // was stored once (its actions, checked above, were done once).
      const originals = after.filter((d) => d.redeliveryOf === null);
      const ackedFirstTime = originals.filter(
        (d) => d.state === 'delivered' && d.attempts.length === 1,
      ).length;
      check(
        problems,
        originals.length === sent.length && ackedFirstTime === sent.length,
        `${ackedFirstTime} of ${sent.length} events acknowledged at their first delivery (${originals.length} delivered)`,
      );
      check(
        problems,
        missingBefore === 0,
        `${missingBefore} actions were still missing when the late copies were due: they did not arrive after processing`,
      );
      const late = plans.filter((p) => p.afterDone).length;
      check(
        problems,
        late === chosen.length - half,
        `${late} events redelivered after processing had finished, expected ${chosen.length - half}`,
      );
      check(
        problems,
        needHumanCalls === complaints,
        `${needHumanCalls} need-human calls for ${complaints} complaints`,
      );
      const count = (copies: Copies) => plans.filter((p) => p.copies === copies).length;
      return {
        scale: `${sent.length} events, ${plan.conversations.length} conversations`,
        figures: {
          redelivered: `${chosen.length} (x2 ${count('twice')}, x4 ${count('four times')}, 4 at once ${count('four at once')}; ${plans.filter((p) => p.afterDone).length} after done)`,
          'copies acked': `${redeliveredAcked + directAcked}/${redelivered.length + direct.length}`,
          'receiver queued/duplicate': `${queued}/${duplicates}`,
          'webhook retries by the platform': platformRetries,
          ...actionFigures(check1),
          'need-human calls': `${needHumanCalls}/${complaints}`,
        },
        expected:
          'each action once (notes, marks, replies, forward ids), every copy acked, queued = events, 0 dead letters',
        passed: problems.length === 0,
        problems,
        worst: {
          'most deliveries of one event': Math.max(...copiesPerEvent.values()),
          'most attempts of one delivery': Math.max(...after.map((d) => d.attempts.length)),
        },
      };
    } finally {
      await world.close();
    }
  },
};
