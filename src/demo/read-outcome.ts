import got from 'got';
import type { ActiveFault } from '../emulator/faults.js';
import { bridgeKeys } from '../queue/redis-keys.js';
import { countDeadLetters } from '../worker/failures/dead-letters.js';
import { DEMO_CONVERSATIONS } from './demo-script.js';
import type { MorningPlay } from './play-morning.js';
import { parsePrometheusText, sumMetric } from './prometheus-text.js';
import type { DemoTotals } from './render-report.js';
import type { DemoWorld } from './start-demo-world.js';
import { type ConversationReport, observeConversation } from './verify-outcome.js';

export interface DemoOutcome {
  conversations: ConversationReport[];
  totals: DemoTotals;
}

/**
 * Reads what happened from the outside (the emulator's conversations and request and delivery
 * logs, the CRM sink, the bridge's /metrics and dead letters) and adds every way it differs from
 * the script to `play.problems`.
 */
export async function readOutcome(world: DemoWorld, play: MorningPlay): Promise<DemoOutcome> {
  const { emulator, crm, bridgeUrl, control, prefix, redis } = world;
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
  for (const report of conversations) play.problems.push(...report.problems);

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
      const what = play.faultNames.get(id) ?? id;
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
  play.problems.push(...globalProblems(totals, play.certainFaults, requests, prefix, redis.url));
  return { conversations, totals };
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
