import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { exampleConfig } from '../../support/bridge-harness.js';
import { createWorld, E2E, type World } from '../../support/e2e-world.js';

function metricValue(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (rest[0] !== '{' && rest[0] !== ' ') continue;
    if (wanted.every((w) => rest.includes(w))) return Number(line.split(' ').at(-1));
  }
  return undefined;
}

describe('observability of a running bridge', () => {
  let world: World | undefined;
  afterEach(async () => {
    await world?.close();
    world = undefined;
  });

  it('serves Prometheus metrics for webhooks, rules, actions, platform calls, queues and dead letters', async () => {
    world = await createWorld({ config: await exampleConfig({ hours: 'open' }) });
    const w = world;
    w.conversation('m-1', { type: 'whatsapp_qr', id: 'ch_wa_qr' });
    w.say('m-1', 'Saya mau refund');
    await waitFor(() => w.crm.forConversation('m-1').length === 1, {
      timeoutMs: 10_000,
      what: 'the escalation',
    });
    const base = `http://127.0.0.1:${w.env.PORT}`;
    // Duplicate delivery and an unauthenticated call, so those outcomes are counted too.
    const original = w.admin.deliveries()[0];
    if (original) w.admin.redeliver(original.id);
    await w.admin.deliveriesSettled();
    await fetch(`${base}${E2E.path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });

    // The event's latency is observed when its job completes, which may come after the note the
    // test waited for: wait for it (with a deadline) rather than read the metrics once.
    await waitFor(
      async () =>
        metricValue(
          await (await fetch(`${base}/metrics`)).text(),
          'convo_bridge_event_latency_seconds_count',
        ) === 1,
      { timeoutMs: 10_000, what: 'the event latency to be observed' },
    );
    const response = await fetch(`${base}/metrics`);
    expect(response.headers.get('content-type')).toContain('text/plain');
    const text = await response.text();
    expect(metricValue(text, 'convo_bridge_webhooks_total', { outcome: 'queued' })).toBe(1);
    expect(metricValue(text, 'convo_bridge_webhooks_total', { outcome: 'duplicate' })).toBe(1);
    expect(metricValue(text, 'convo_bridge_webhooks_total', { outcome: 'unauthorized' })).toBe(1);
    expect(
      metricValue(text, 'convo_bridge_rule_matches_total', {
        rule: 'escalate-complaints',
        kind: 'message_in',
      }),
    ).toBe(1);
    expect(
      metricValue(text, 'convo_bridge_actions_total', {
        rule: 'escalate-complaints',
        type: 'note',
        state: 'done',
      }),
    ).toBe(1);
    expect(
      metricValue(text, 'convo_bridge_platform_calls_total', { operation: 'addNote', result: 'ok' }),
    ).toBe(1);
    expect(
      metricValue(text, 'convo_bridge_platform_calls_total', { operation: 'markNeedHuman', result: 'ok' }),
    ).toBe(1);
    expect(metricValue(text, 'convo_bridge_queue_jobs', { queue: 'timers', state: 'delayed' })).toBe(1);
    expect(metricValue(text, 'convo_bridge_dead_letters')).toBe(0);
    expect(metricValue(text, 'convo_bridge_event_latency_seconds_count')).toBe(1);
    expect(text).toContain('convo_bridge_webhook_ack_seconds_bucket');
    expect(text).toContain('convo_bridge_process_resident_memory_bytes');
  });

  it('mounts bull-board behind basic auth when an admin password is set, and not at all otherwise', async () => {
    const config = `${await exampleConfig({ hours: 'open' })}admin: { username: ops, password: "s3cret-admin" }\n`;
    world = await createWorld({ config });
    const base = `http://127.0.0.1:${world.env.PORT}`;
    expect((await fetch(`${base}/admin/queues`)).status).toBe(401);
    const wrong = Buffer.from('ops:nope').toString('base64');
    expect(
      (await fetch(`${base}/admin/queues`, { headers: { authorization: `Basic ${wrong}` } })).status,
    ).toBe(401);
    const right = Buffer.from('ops:s3cret-admin').toString('base64');
    const page = await fetch(`${base}/admin/queues`, { headers: { authorization: `Basic ${right}` } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<html');
    await world.close();

    world = await createWorld({ config: await exampleConfig({ hours: 'open' }) });
    const off = await fetch(`http://127.0.0.1:${world.env.PORT}/admin/queues`);
    expect(off.status).toBe(404);
    expect(await off.json()).toMatchObject({ success: false });
  });

  it('is ready when Redis takes writes and the worker runs; every event log line names its conversation and key', async () => {
    world = await createWorld({ config: await exampleConfig({ hours: 'open' }) });
    const w = world;
    const base = `http://127.0.0.1:${w.env.PORT}`;
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    // A config without businesses: is a table of one business, `default`, said like any other.
    expect(await (await fetch(`${base}/readyz`)).json()).toEqual({
      status: 'ready',
      businesses: { default: 'ok' },
    });
    w.conversation('l-1', { type: 'whatsapp_qr', id: 'ch_wa_qr' });
    w.say('l-1', 'Saya kecewa, nomor saya +62 812-3456-7890');
    // Make the forward fail past its own short retries so that the worker logs about the event.
    w.crm.failNext(4);
    await waitFor(() => w.crm.forConversation('l-1').length === 1, {
      timeoutMs: 15_000,
      what: 'the forward after a retry',
    });
    const [bridge] = w.bridges;
    const eventLines = (bridge?.jsonLogs() ?? []).filter((line) => 'jobId' in line || 'eventKey' in line);
    expect(eventLines.length).toBeGreaterThan(0);
    for (const line of eventLines) {
      expect(line).toHaveProperty('conversationId', 'l-1');
      expect(String(line.eventKey)).toMatch(/^channel\.message_in\|/);
    }
    const everything = bridge?.logs.join('\n') ?? '';
    expect(everything).not.toContain(E2E.secret);
    expect(everything).not.toContain(E2E.webhookSecret);
    expect(everything).not.toContain('3456-7890');
  });
});
