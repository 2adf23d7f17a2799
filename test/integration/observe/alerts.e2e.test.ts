import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { exampleConfig } from '../../support/bridge-harness.js';
import { createWorld, type World } from '../../support/e2e-world.js';
import { type ActiveAlert, type PrometheusServer, startPrometheus } from '../../support/prometheus-server.js';

/**
 * Issue 29, item 6: a real Prometheus (Debian's package) scrapes a running bridge every second
 * and evaluates deploy/prometheus/alerts.yml every second. The alerts' expressions, labels and
 * annotations are the file's own; only their `for:` is 1 s in the copy it loads, so that the
 * test does not wait out the 2 minutes an on-call person is given.
 */
const CREDENTIALS = 'ConvoBridgeCredentialsRefused';

function named(alerts: ActiveAlert[], name: string): ActiveAlert | undefined {
  return alerts.find((alert) => alert.labels.alertname === name);
}

describe('the alerting rules against a real Prometheus and a running bridge', () => {
  let world: World | undefined;
  let prometheus: PrometheusServer | undefined;
  afterEach(async () => {
    await prometheus?.close();
    await world?.close();
    prometheus = undefined;
    world = undefined;
  });

  it('fires the credential-pause alert during a 401 storm and resolves it after', async () => {
    world = await createWorld({
      config: await exampleConfig({ hours: 'open', worker: { auth_failure_pause: '1s' } }),
    });
    const w = world;
    prometheus = await startPrometheus({ targets: [`127.0.0.1:${w.env.PORT}`], ruleFor: '1s' });
    const p = prometheus;

    // Scraped, Redis up, no credential trouble: the rules are loaded and nothing fires.
    await waitFor(async () => (await p.query('convo_bridge_redis_up')).some((sample) => sample.value === 1), {
      timeoutMs: 20_000,
      what: 'Prometheus to scrape the bridge (convo_bridge_redis_up 1)',
    });
    expect(await p.query('convo_bridge_platform_auth_failing')).toEqual([
      expect.objectContaining({ value: 0 }),
    ]);
    const rules = (await (await fetch(`${p.url}/api/v1/rules`)).json()) as {
      data: { groups: { rules: { name: string; health: string }[] }[] };
    };
    const loaded = rules.data.groups.flatMap((group) => group.rules);
    expect(loaded.map((rule) => rule.name)).toContain(CREDENTIALS);
    expect(loaded.filter((rule) => rule.health !== 'ok' && rule.health !== 'unknown')).toEqual([]);
    expect(named(await p.alerts(), CREDENTIALS)).toBeUndefined();

    w.admin.setAuthStorm(true);
    w.conversation('m-1', { type: 'telegram', id: 'ch_tg' });
    w.say('m-1', 'Tolong refund');
    const firing = await waitFor(
      async () => {
        const alert = named(await p.alerts(), CREDENTIALS);
        return alert?.state === 'firing' ? alert : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250, what: `${CREDENTIALS} to fire during the 401 storm` },
    );
    // Every series names its business (`default` for a config without businesses:), and so does the alert.
    expect(firing.labels).toEqual({ alertname: CREDENTIALS, business: 'default', severity: 'critical' });
    expect(firing.annotations.summary).toBe(
      'The platform refuses the credentials of business default: work is paused',
    );
    expect(firing.annotations.description).toContain('Fix platform.auth');

    w.admin.setAuthStorm(false);
    await waitFor(() => w.notes('m-1').length === 1, { timeoutMs: 15_000, what: 'the note after the storm' });
    await waitFor(async () => named(await p.alerts(), CREDENTIALS) === undefined, {
      timeoutMs: 30_000,
      intervalMs: 250,
      what: `${CREDENTIALS} to resolve after the storm`,
    });
    // The other alerts stayed quiet all along (Redis up, no 503, no dead letter, nothing waiting long).
    expect((await p.alerts()).filter((alert) => alert.state === 'firing')).toEqual([]);
  });
});
