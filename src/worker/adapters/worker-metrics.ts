import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** The worker's Prometheus metrics, registered on the process's registry. */
export function createWorkerMetrics(registry: Registry) {
  const registers = [registry];
  return {
    jobs: new Counter({
      name: 'convo_bridge_jobs_total',
      help: 'Jobs finished by queue and outcome (completed, retried, paused, dead_lettered, parked).',
      labelNames: ['queue', 'outcome'] as const,
      registers,
    }),
    actions: new Counter({
      name: 'convo_bridge_actions_total',
      help: 'Rule actions by rule, action type and final state (done, skipped, failed).',
      labelNames: ['rule', 'type', 'state'] as const,
      registers,
    }),
    rulesMatched: new Counter({
      name: 'convo_bridge_rule_matches_total',
      help: 'Rules that matched an event, by rule and event kind.',
      labelNames: ['rule', 'kind'] as const,
      registers,
    }),
    windowBlocked: new Counter({
      name: 'convo_bridge_window_blocked_replies_total',
      help: 'Free-form replies not sent because the channel reply window was closed.',
      labelNames: ['rule'] as const,
      registers,
    }),
    pauses: new Counter({
      name: 'convo_bridge_queue_pauses_total',
      help: 'Times the worker paused its queues, by reason (rate-limited, auth).',
      labelNames: ['reason'] as const,
      registers,
    }),
    deadLetters: new Counter({
      name: 'convo_bridge_dead_letters_total',
      help: 'Events or timers moved to the dead-letter set.',
      labelNames: ['queue', 'code'] as const,
      registers,
    }),
    platformCalls: new Counter({
      name: 'convo_bridge_platform_calls_total',
      help: 'HTTP calls to the platform by operation and result (ok or an error code).',
      labelNames: ['operation', 'result'] as const,
      registers,
    }),
    platformLatency: new Histogram({
      name: 'convo_bridge_platform_call_seconds',
      help: 'Latency of HTTP calls to the platform.',
      labelNames: ['operation'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    eventLatency: new Histogram({
      name: 'convo_bridge_event_latency_seconds',
      help: 'From the receiver accepting an event to the worker finishing its actions.',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    }),
    authFailing: new Gauge({
      name: 'convo_bridge_platform_auth_failing',
      help: '1 while the platform rejects the configured credentials (work is paused, not lost).',
      registers,
    }),
  };
}
export type WorkerMetrics = ReturnType<typeof createWorkerMetrics>;
