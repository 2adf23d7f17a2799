import { setTimeout as sleep } from 'node:timers/promises';
import type { AdminRequest } from '../support/admin-client.js';
import { createFaultWorld } from '../support/fault-world.js';
import { metricValue, readMetrics } from '../support/receiver-metrics.js';
import { check, type Scenario, seconds } from '../support/scenario.js';
import { createConversations, planTraffic, sendMessages } from '../support/traffic.js';
import { actionFigures, actionProblems, verifyActions } from '../support/verify-actions.js';

const AUTH_LOG_LINE = 'the platform rejects our credentials';
/** The shipped `worker.auth_failure_pause`: longer than either storm, so one burst is all it may cost. */
const AUTH_PAUSE_MS = 30_000;
/** The shipped `worker.concurrency`: events one `work` process runs at once. */
const CONCURRENCY = 16;
/** Refusals closer than this to the previous one belong to the same burst (calls already in flight). */
const BURST_GAP_MS = 1_000;

/**
 * The platform's refusals during the storm, from its request log: calls that presented the
 * credentials the storm rotated away, grouped into bursts (a gap of more than BURST_GAP_MS starts
 * a new one).
 */
function refusalBursts(requests: readonly AdminRequest[], from: number, to: number): number[][] {
  const times = requests
    .filter((r) => r.credential === 'rotated' && Date.parse(r.at) >= from && Date.parse(r.at) < to)
    .map((r) => Date.parse(r.at))
    .sort((a, b) => a - b);
  const bursts: number[][] = [];
  for (const at of times) {
    const last = bursts.at(-1);
    if (last && at - (last.at(-1) ?? at) <= BURST_GAP_MS) last.push(at);
    else bursts.push([at]);
  }
  return bursts;
}

/**
 * 4. Platform faults, with the shipped `worker.attempts` (8), backoff (1 s doubling to 5 m) and
 * `auth_failure_pause` (30 s). Phase 1: while the events arrive, 30% 5xx (half before acting, half
 * after), 10% 429 with Retry-After, 2 s latency spikes and dropped connections (before and after
 * acting) on every endpoint; the faults end with the traffic (an incident, not a platform that
 * fails a third of its calls for ever: against that no attempt count suffices). Phase 2: a 401
 * storm (credentials rotated on the platform), more events arrive, then the credentials are
 * restored. The platform must see the pause: one burst of refused calls (those in flight), then
 * none until the credentials are back; the bridge must say so (log line,
 * `convo_bridge_platform_auth_failing`, the auth alarm key) and dead-letter nothing. After it every
 * action is done, once.
 */
export const platformFaults: Scenario = {
  id: 4,
  name: 'Platform faults',
  budgetMs: (scale) => (scale === 'full' ? 15 * 60_000 : 180_000),
  async run(scale, { log, signal }) {
    const events = scale === 'full' ? 1_500 : 300;
    const stormEvents = scale === 'full' ? 200 : 60;
    const stormMs = scale === 'full' ? 15_000 : 6_000;
    const rate = 30;
    // The "one burst, then none" check below holds only while the pause outlasts the storm.
    if (stormMs >= AUTH_PAUSE_MS) throw new Error(`the storm (${stormMs} ms) must be shorter than the pause`);
    // Six messages per conversation: a customer repeating the same complaint is part of the test.
    const plan = planTraffic({ events: events + stormEvents, perConversation: 6, seed: 404, stem: 'pf' });
    const world = await createFaultWorld({
      config: {
        hours: 'open',
        worker: {
          lock_duration: '10s',
          stalled_interval: '5s',
        },
      },
      processes: ['serve', 'work', 'work'],
      randomSeed: 404,
      workMetrics: true,
      signal,
    });
    try {
      await createConversations(world.admin, plan.conversations);
      // Faults draw in order and the first failure that fires wins: 0.15 + 0.85 x 0.176 = 30% 5xx,
      // then 0.7 x 0.143 = 10% 429; drops and latency come on top of the rest.
      const faults = [
        { type: 'error', endpoint: 'all', fraction: 0.15, status: 500, mode: 'before' },
        { type: 'error', endpoint: 'all', fraction: 0.176, status: 503, mode: 'after' },
        { type: 'rate_limit', endpoint: 'all', fraction: 0.143, retryAfterSeconds: 1 },
        { type: 'drop', endpoint: 'all', fraction: 0.03, mode: 'before' },
        { type: 'drop', endpoint: 'all', fraction: 0.03, mode: 'after' },
        { type: 'latency', endpoint: 'all', fraction: 0.05, latencyMs: 2_000 },
      ] as const;
      for (const fault of faults) await world.admin.addFault(fault);
      const first = plan.messages.slice(0, events);
      const sentFirst = await sendMessages(world.admin, first, { concurrency: 8, ratePerSecond: rate });
      const requestsAfterFaults = await world.admin.requests();
      const firedPerFault = await world.admin.faults();
      await world.admin.clearFaults();
      log(`${sentFirst.length} events sent under faults; faults off`);
      // Retries of the fault phase come up to 64 s apart (the shipped backoff's 7th delay).
      await world.settle(180_000 + events * 80, 'the bridge to finish the events sent under faults');

      // Phase 2: the 401 storm.
      const workers = world.running('work');
      const metricsOf = async () =>
        Promise.all(
          workers.map(async (w) => {
            const origin = world.metricsOrigin(w);
            return origin ? readMetrics(origin).catch(() => '') : '';
          }),
        );
      const deadBefore = await world.deadLetters();
      await world.admin.setAuthStorm(true);
      const stormStarted = Date.now();
      const sentStorm = await sendMessages(world.admin, plan.messages.slice(events), {
        concurrency: 8,
        ratePerSecond: rate,
      });
      const alarm = await world
        .waitUntil(
          async () => {
            const logged = workers.some((w) => w.logs.some((line) => line.includes(AUTH_LOG_LINE)));
            const key = (await world.redis.exists(world.keys.authAlarm)) === 1;
            return logged && key ? { logged, key } : false;
          },
          { timeoutMs: 20_000, what: 'the auth alarm (log line and Redis key)' },
        )
        .catch(() => ({ logged: false, key: false }));
      const stormMetrics = await metricsOf();
      const gaugeDuring = Math.max(
        0,
        ...stormMetrics.map((m) => metricValue(m, 'convo_bridge_platform_auth_failing')),
      );
      const remaining = stormStarted + stormMs - Date.now();
      if (remaining > 0) await sleep(remaining);
      const deadDuringStorm = (await world.deadLetters()) - deadBefore;
      const pendingAtStormEnd = await world.pendingJobs();
      const pauses = (await metricsOf()).reduce(
        (sum, m) => sum + metricValue(m, 'convo_bridge_queue_pauses_total', { reason: 'auth' }),
        0,
      );
      await world.admin.setAuthStorm(false);
      const stormEnded = Date.now();
      log(`401 storm of ${stormEnded - stormStarted} ms over; ${pendingAtStormEnd} jobs were waiting`);

      await world.settle(120_000 + stormEvents * 100, 'the bridge to catch up after the storm');
      const recoveredMs = Date.now() - stormEnded;
      const gaugeAfter = Math.max(
        0,
        ...(await metricsOf()).map((m) => metricValue(m, 'convo_bridge_platform_auth_failing')),
      );
      const sent = [...sentFirst, ...sentStorm];
      const result = await verifyActions(world, sent, 'open');
      const requests = await world.admin.requests();
      const during = requests.filter(
        (r) => Date.parse(r.at) >= stormStarted && Date.parse(r.at) < stormEnded && r.endpoint !== null,
      );
      const refused = during.filter((r) => r.rc === 401 || r.httpStatus === 401);
      const notRotated = refused.filter((r) => r.credential !== 'rotated').length;
      const bursts = refusalBursts(requests, stormStarted, stormEnded);
      const firstBurst = bursts[0] ?? [];
      const afterFirstBurst = during.filter(
        (r) => Date.parse(r.at) > (firstBurst.at(-1) ?? stormEnded),
      ).length;
      const burstCap = workers.length * CONCURRENCY;
      const resumed = requests.some(
        (r) => Date.parse(r.at) >= stormEnded && r.credential === 'current' && r.rc === null,
      );
      const faulted = requestsAfterFaults.filter((r: AdminRequest) => r.faults.length > 0).length;
      const jobs = await world.jobStats();

      const problems = actionProblems(result, { resentAllowed: true });
      check(problems, faulted > 0, 'no fault fired');
      check(problems, alarm.logged, `no worker logged "${AUTH_LOG_LINE}" during the 401 storm`);
      check(problems, alarm.key, 'the auth alarm key was not set during the 401 storm');
      check(
        problems,
        gaugeDuring === 1,
        `convo_bridge_platform_auth_failing was ${gaugeDuring} during the storm, expected 1`,
      );
      check(
        problems,
        gaugeAfter === 0,
        `convo_bridge_platform_auth_failing was ${gaugeAfter} after recovery, expected 0`,
      );
      check(problems, deadDuringStorm === 0, `${deadDuringStorm} dead letters during the 401 storm`);
      // The pause as the platform saw it: refused calls with the rotated-away credentials, all in
      // one burst of calls already in flight (at most every slot of every worker), then no call at
      // all until the credentials were back (the pause is longer than the storm).
      check(problems, refused.length > 0, 'the platform refused no call during the 401 storm');
      check(
        problems,
        notRotated === 0,
        `${notRotated} refused calls did not present the rotated credentials`,
      );
      check(
        problems,
        bursts.length <= 1,
        `the platform refused calls in ${bursts.length} bursts during the storm (${bursts.map((b) => b.length).join(', ')}): the work did not stay paused`,
      );
      check(
        problems,
        firstBurst.length <= burstCap,
        `${firstBurst.length} calls refused in the first burst, more than the ${burstCap} slots of the workers`,
      );
      check(
        problems,
        afterFirstBurst === 0,
        `${afterFirstBurst} platform calls after the first refusals and before the credentials were back`,
      );
      check(problems, resumed, 'no platform call succeeded after the credentials were restored');
      check(problems, pauses > 0, 'no worker counted an auth pause (convo_bridge_queue_pauses_total)');
      return {
        scale: `${events} events under faults + ${stormEvents} in a ${seconds(stormMs)} 401 storm`,
        figures: {
          'calls faulted': `${faulted}/${requestsAfterFaults.length} (${firedPerFault.map((f) => `${f.type}${f.type === 'latency' || f.type === 'rate_limit' ? '' : ` ${f.mode ?? ''}`} ${f.fired}`).join(', ')})`,
          '401 storm': `${refused.length} refused (${bursts.length} burst(s), first ${firstBurst.length} calls in ${seconds((firstBurst.at(-1) ?? 0) - (firstBurst[0] ?? 0))}; ${afterFirstBurst} calls after it), alarm ${alarm.logged && alarm.key ? 'logged + key' : 'MISSING'}, gauge ${gaugeDuring}, auth pauses ${pauses}, dead letters ${deadDuringStorm}`,
          'caught up after storm': seconds(recoveredMs),
          ...actionFigures(result),
        },
        expected:
          'every action once after recovery; storm: one burst of refused calls (<= worker slots), then none until restored; alarm logged, key + gauge 1, 0 dead letters',
        passed: problems.length === 0,
        problems,
        worst: {
          'most failed runs of one event': Math.max(0, ...jobs.map((j) => j.failedRuns)),
          'most runs of one event (parked and paused included)': Math.max(0, ...jobs.map((j) => j.started)),
        },
      };
    } finally {
      await world.close();
    }
  },
};
