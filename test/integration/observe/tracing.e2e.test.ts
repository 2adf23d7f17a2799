import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { exampleConfig, findFreePort } from '../../support/bridge-harness.js';
import { createWorld, E2E, type World } from '../../support/e2e-world.js';
import { type ReceivedSpan, SPAN_KIND, startOtlpReceiver } from '../../support/otlp-receiver.js';

/**
 * Issue 14, item 5: one webhook yields one connected trace, from the HTTP request through the
 * queue to each platform call and the forward, exported over OTLP/HTTP to a local receiver; with
 * tracing off nothing is exported and no OpenTelemetry SDK module is loaded.
 */
const PROBE = pathToFileURL(join(process.cwd(), 'test', 'support', 'module-probe.mjs')).href;

function probeEnv(file: string): Record<string, string> {
  return {
    MODULE_PROBE_FILE: file,
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${PROBE}`.trim(),
  };
}

async function loadedModules(file: string): Promise<string[]> {
  return (await readFile(file, 'utf8')).split('\n').filter((line) => line !== '');
}

/** Modules only a bridge with tracing on loads (the SDK, bullmq-otel and our SDK adapter). */
const TRACING_MODULES =
  /@opentelemetry\/(sdk-|exporter-|resources|context-async-hooks|core)|bullmq-otel|\/observe\/tracing\.js/;

describe('tracing end to end (OpenTelemetry, OTLP/HTTP)', () => {
  let world: World | undefined;
  let otlp: Awaited<ReturnType<typeof startOtlpReceiver>> | undefined;
  const probeFile = join(tmpdir(), `module-probe-${process.pid}-${Date.now()}.txt`);
  afterEach(async () => {
    await world?.close();
    await otlp?.close();
    await rm(probeFile, { force: true });
    world = undefined;
    otlp = undefined;
  });

  it('one webhook -> one trace: receive, store, process, each platform call and the forward, linked and attributed', async () => {
    otlp = await startOtlpReceiver();
    const receiver = otlp;
    world = await createWorld({
      config: await exampleConfig({ hours: 'closed' }),
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_SERVICE_NAME: 'bridge-under-test',
        // Export every 100 ms rather than every 5 s, so the test waits less.
        OTEL_BSP_SCHEDULE_DELAY: '100',
        ...probeEnv(probeFile),
      },
    });
    const w = world;
    expect(w.bridges[0]?.logs.join('\n')).toContain(
      `tracing on, OTLP/HTTP JSON to ${receiver.url}/v1/traces as service \\"bridge-under-test\\"`,
    );
    w.conversation('c-trace', { type: 'whatsapp_qr', id: 'ch_wa_qr' });
    w.say('c-trace', 'Saya kecewa, minta refund!');
    await waitFor(() => w.crm.forConversation('c-trace').length === 1, {
      timeoutMs: 10_000,
      what: 'the CRM forward',
    });

    const ofConversation = (span: ReceivedSpan) =>
      span.attributes['convo_bridge.conversation_id'] === 'c-trace';
    // The worker's span ends after its children; BullMQ's job span after the job completes.
    const { process, jobSpan } = await waitFor(
      () => {
        const found = receiver.spans.find((s) => s.name === 'event process' && ofConversation(s));
        const link = found?.links[0];
        const job = link && receiver.spans.find((s) => s.spanId === link.spanId);
        return found && job ? { process: found, jobSpan: job } : undefined;
      },
      { timeoutMs: 10_000, what: "the worker's spans to be exported" },
    );
    const trace = receiver.spans.filter((s) => s.traceId === process.traceId);
    const one = (name: string) => {
      const matches = trace.filter((s) => s.name === name);
      expect(matches.map((s) => s.name)).toEqual([name]);
      return matches[0] as ReceivedSpan;
    };

    const webhook = one('webhook receive');
    expect(webhook).toMatchObject({ kind: SPAN_KIND.server, parentSpanId: '', service: 'bridge-under-test' });
    const eventKey = webhook.attributes['convo_bridge.event_key'];
    expect(eventKey).toMatch(/^channel\.message_in\|/);
    expect(webhook.attributes).toMatchObject({
      'convo_bridge.conversation_id': 'c-trace',
      'convo_bridge.channel': 'whatsapp',
      'convo_bridge.outcome': 'queued',
      'http.request.method': 'POST',
      'http.route': E2E.path,
      'http.response.status_code': 200,
    });

    const store = one('queue store');
    expect(store).toMatchObject({ kind: SPAN_KIND.producer, parentSpanId: webhook.spanId });
    expect(store.attributes).toMatchObject({
      'convo_bridge.event_key': eventKey,
      'convo_bridge.outcome': 'queued',
      'messaging.system': 'bullmq',
    });

    // The worker continues the webhook's trace from the carrier in the job's batch item...
    expect(process).toMatchObject({ kind: SPAN_KIND.consumer, parentSpanId: store.spanId });
    expect(process.attributes).toMatchObject({
      'convo_bridge.conversation_id': 'c-trace',
      'convo_bridge.event_key': eventKey,
      'convo_bridge.rules': ['escalate-complaints'],
    });
    // ...and links the job's own span, from BullMQ's telemetry (bullmq-otel).
    expect(jobSpan).toMatchObject({ name: 'process events', kind: SPAN_KIND.consumer, scope: 'bullmq' });

    const platformUrl = w.emulator.url;
    for (const [name, path] of [
      ['platform addNote', '/v1/note'],
      ['platform markNeedHuman', '/v1/conversation/need-human'],
    ] as const) {
      const call = one(name);
      expect(call).toMatchObject({ kind: SPAN_KIND.client, parentSpanId: process.spanId });
      expect(call.attributes).toMatchObject({
        'http.request.method': 'POST',
        'url.full': `${platformUrl}${path}`,
        'http.response.status_code': 200,
        'convo_bridge.attempt': 1,
      });
    }
    const forward = one('forward crm');
    expect(forward).toMatchObject({ kind: SPAN_KIND.client, parentSpanId: process.spanId });
    expect(forward.attributes).toMatchObject({
      'http.request.method': 'POST',
      'url.full': w.crm.url,
      'http.response.status_code': 200,
      'convo_bridge.destination': 'crm',
    });
    // The escalation timer's job carries the trace too (BullMQ's add span, a child of the run).
    const timer = trace.find((s) => s.name.startsWith('add timers'));
    expect(timer).toMatchObject({ kind: SPAN_KIND.producer, parentSpanId: process.spanId, scope: 'bullmq' });

    // One trace, every span of it connected to the webhook's span; no error; no secret anywhere.
    const ids = new Set(trace.map((s) => s.spanId));
    for (const span of trace) {
      if (span !== webhook) expect(ids.has(span.parentSpanId), span.name).toBe(true);
      expect(span.status, span.name).not.toBe(2);
    }
    const everything = JSON.stringify(receiver.spans);
    for (const secret of [E2E.secret, E2E.webhookSecret, E2E.crmSecret])
      expect(everything).not.toContain(secret);
    // BullMQ's housekeeping spans (getNextJob polls...) are dropped.
    expect(receiver.spans.filter((s) => s.scope === 'bullmq' && s.kind === SPAN_KIND.internal)).toEqual([]);
    // The module probe sees the SDK when tracing is on (the check of the test below is meaningful).
    expect((await loadedModules(probeFile)).some((url) => TRACING_MODULES.test(url))).toBe(true);
  });

  it('a collector that does not answer: events are processed as usual, and the log says so once', async () => {
    // A free port nobody listens on: every export is refused.
    const closedPort = await findFreePort();
    world = await createWorld({
      config: await exampleConfig({ hours: 'closed' }),
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${closedPort}`, OTEL_BSP_SCHEDULE_DELAY: '100' },
    });
    const w = world;
    w.conversation('c-lost', { type: 'whatsapp_qr', id: 'ch_wa_qr' });
    w.say('c-lost', 'Saya kecewa, minta refund!');
    await waitFor(() => w.crm.forConversation('c-lost').length === 1, {
      timeoutMs: 10_000,
      what: 'the CRM forward',
    });
    const bridge = w.bridges[0];
    const warnings = () => (bridge?.jsonLogs() ?? []).filter((l) => String(l.msg).startsWith('tracing: '));
    // The exporter retries a refused export a few times (about 5 s) before it gives up and says so.
    await waitFor(() => warnings().length > 0, { timeoutMs: 30_000, what: 'the export failure warning' });
    expect(warnings()).toHaveLength(1);
    expect(String(warnings()[0]?.msg)).toContain(`ECONNREFUSED 127.0.0.1:${closedPort}`);
    expect(String(warnings()[0]?.msg)).toContain(`the collector at http://127.0.0.1:${closedPort}/v1/traces`);
    expect(w.detail('c-lost').needHuman).toBe(true);
  });

  it('off: OTEL_SDK_DISABLED=true wins over an endpoint; nothing is exported and no SDK module is loaded', async () => {
    otlp = await startOtlpReceiver();
    const receiver = otlp;
    world = await createWorld({
      config: await exampleConfig({ hours: 'closed' }),
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_SDK_DISABLED: 'true',
        OTEL_BSP_SCHEDULE_DELAY: '100',
        ...probeEnv(probeFile),
      },
    });
    const w = world;
    w.conversation('c-untraced', { type: 'whatsapp_qr', id: 'ch_wa_qr' });
    w.say('c-untraced', 'Saya kecewa, minta refund!');
    await waitFor(() => w.crm.forConversation('c-untraced').length === 1, {
      timeoutMs: 10_000,
      what: 'the CRM forward',
    });
    // A bridge that traced would export at the latest when it stops (its final flush).
    expect(await w.bridges[0]?.stop('SIGTERM')).toBe(0);
    expect(receiver.exports()).toBe(0);
    const modules = await loadedModules(probeFile);
    expect(modules.some((url) => url.endsWith('/dist/cli.js'))).toBe(true);
    expect(modules.filter((url) => TRACING_MODULES.test(url))).toEqual([]);
    expect(w.bridges[0]?.logs.join('\n')).not.toContain('tracing on');
  });
});
