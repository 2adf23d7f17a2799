import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

type Labels<L extends string> = Partial<Record<L, string | number>>;

/** What the worker does with a counter, a histogram and a gauge (prom-client's, or a business's view). */
export interface CounterLike<L extends string> {
  inc(labels: Labels<L>, value?: number): void;
}
export interface HistogramLike<L extends string> {
  observe(labels: Labels<L>, value: number): void;
}
export interface GaugeLike {
  set(value: number): void;
}

/** The worker's metrics, as the worker uses them. */
export interface WorkerMetrics {
  jobs: CounterLike<'queue' | 'outcome'>;
  actions: CounterLike<'rule' | 'type' | 'state'>;
  rulesMatched: CounterLike<'rule' | 'kind'>;
  windowBlocked: CounterLike<'rule'>;
  pauses: CounterLike<'reason'>;
  deadLetters: CounterLike<'queue' | 'code'>;
  platformCalls: CounterLike<'operation' | 'result'>;
  platformLatency: HistogramLike<'operation'>;
  eventLatency: HistogramLike<never>;
  authFailing: GaugeLike;
  /** Shadow rules: events whose candidate plan differs from the active one, per rule. */
  shadowDifferences: CounterLike<'rule'>;
  /** Shadow rules: events the candidate rules were evaluated for. */
  shadowEvents: CounterLike<never>;
}

/** The registered metrics, each labelled `business` (`default` for a config without `businesses:`). */
export interface BusinessWorkerMetrics {
  /** The metrics as one business's worker uses them: every observation gets its `business` label. */
  forBusiness(business: string): WorkerMetrics;
}

/**
 * The worker's Prometheus metrics, registered on the process's registry. Every metric has a
 * `business` label (ids from the config only, so it stays bounded; `default` for the one business
 * of a config without `businesses:`), and the worker reaches them through `forBusiness`.
 */
export function createWorkerMetrics(registry: Registry): BusinessWorkerMetrics {
  const extra = ['business'] as const;
  const registers = [registry];
  const metrics = {
    jobs: new Counter({
      name: 'convo_bridge_jobs_total',
      help: 'Jobs finished by queue and outcome (completed, retried, paused, dead_lettered, parked).',
      labelNames: ['queue', 'outcome', ...extra],
      registers,
    }),
    actions: new Counter({
      name: 'convo_bridge_actions_total',
      help: 'Rule actions by rule, action type and final state (done, skipped, failed).',
      labelNames: ['rule', 'type', 'state', ...extra],
      registers,
    }),
    rulesMatched: new Counter({
      name: 'convo_bridge_rule_matches_total',
      help: 'Rules that matched an event, by rule and event kind.',
      labelNames: ['rule', 'kind', ...extra],
      registers,
    }),
    windowBlocked: new Counter({
      name: 'convo_bridge_window_blocked_replies_total',
      help: 'Free-form replies not sent because the channel reply window was closed.',
      labelNames: ['rule', ...extra],
      registers,
    }),
    pauses: new Counter({
      name: 'convo_bridge_queue_pauses_total',
      help: 'Times the worker paused its queues, by reason (rate-limited, auth).',
      labelNames: ['reason', ...extra],
      registers,
    }),
    deadLetters: new Counter({
      name: 'convo_bridge_dead_letters_total',
      help: 'Events or timers moved to the dead-letter set.',
      labelNames: ['queue', 'code', ...extra],
      registers,
    }),
    platformCalls: new Counter({
      name: 'convo_bridge_platform_calls_total',
      help: 'HTTP calls to the platform by operation and result (ok or an error code).',
      labelNames: ['operation', 'result', ...extra],
      registers,
    }),
    platformLatency: new Histogram({
      name: 'convo_bridge_platform_call_seconds',
      help: 'Latency of HTTP calls to the platform.',
      labelNames: ['operation', ...extra],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    eventLatency: new Histogram({
      name: 'convo_bridge_event_latency_seconds',
      help: 'From the receiver accepting an event to the worker finishing its actions.',
      labelNames: [...extra],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    }),
    authFailing: new Gauge({
      name: 'convo_bridge_platform_auth_failing',
      help: '1 while the platform rejects the configured credentials (work is paused, not lost).',
      labelNames: [...extra],
      registers,
    }),
    shadowDifferences: new Counter({
      name: 'convo_bridge_shadow_differences_total',
      help: 'Shadow rules (shadow:): events on which the candidate rules would have done something else than the active rules, by rule.',
      labelNames: ['rule', ...extra],
      registers,
    }),
    shadowEvents: new Counter({
      name: 'convo_bridge_shadow_events_total',
      help: 'Shadow rules (shadow:): events the candidate rules were evaluated for, beside the active rules.',
      labelNames: [...extra],
      registers,
    }),
  };
  const views = new Map<string, WorkerMetrics>();
  return {
    forBusiness(business) {
      let view = views.get(business);
      if (view === undefined) {
        view = businessView(metrics, business);
        views.set(business, view);
        // The credentials alarm has a sample from the start (0), as alerts and dashboards expect.
        view.authFailing.set(0);
      }
      return view;
    },
  };
}

function businessView(
  metrics: {
    [K in Exclude<keyof WorkerMetrics, 'authFailing'>]: Counter<string> | Histogram<string>;
  } & { authFailing: Gauge<string> },
  business: string,
): WorkerMetrics {
  const counter = <L extends string>(c: Counter<string>): CounterLike<L> => ({
    inc: (labels, value) => c.inc({ ...labels, business } as Labels<string>, value ?? 1),
  });
  const histogram = <L extends string>(h: Histogram<string>): HistogramLike<L> => ({
    observe: (labels, value) => h.observe({ ...labels, business } as Labels<string>, value),
  });
  return {
    jobs: counter(metrics.jobs as Counter<string>),
    actions: counter(metrics.actions as Counter<string>),
    rulesMatched: counter(metrics.rulesMatched as Counter<string>),
    windowBlocked: counter(metrics.windowBlocked as Counter<string>),
    pauses: counter(metrics.pauses as Counter<string>),
    deadLetters: counter(metrics.deadLetters as Counter<string>),
    platformCalls: counter(metrics.platformCalls as Counter<string>),
    platformLatency: histogram(metrics.platformLatency as Histogram<string>),
    eventLatency: histogram(metrics.eventLatency as Histogram<string>),
    authFailing: { set: (value) => metrics.authFailing.set({ business }, value) },
    shadowDifferences: counter(metrics.shadowDifferences as Counter<string>),
    shadowEvents: counter(metrics.shadowEvents as Counter<string>),
  };
}
