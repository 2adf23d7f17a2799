import got from 'got';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type CrmSink, startCrmSink } from '../../../src/demo/crm-sink.js';
import { createForwarder } from '../../../src/forward/forward-event.js';
import { makeEvent } from '../../support/make-event.js';

const SECRET = 'crm-secret-5d0c7e1a9b';
const body = (action: string) => ({
  type: 'convo_bridge.event' as const,
  rule: 'escalate-complaints',
  action,
  event: makeEvent({ conversationId: 'conv-budi' }),
});

describe("the demo's CRM sink (real HTTP, the bridge's real forwarder)", () => {
  let sink: CrmSink;
  beforeEach(async () => {
    sink = await startCrmSink({ secret: SECRET });
  });
  afterEach(async () => {
    await sink.close();
  });

  it('verifies and records a signed forward', async () => {
    const forwarder = createForwarder({ crm: { url: sink.url, secret: SECRET, retries: 0 } });
    expect(
      await forwarder.forward('crm', body('escalate-complaints#2'), 'ev-1|escalate-complaints#2'),
    ).toEqual({
      status: 200,
    });
    expect(sink.deliveries()).toEqual([
      expect.objectContaining({
        verified: true,
        status: 200,
        duplicate: false,
        conversationId: 'conv-budi',
        rule: 'escalate-complaints',
        action: 'escalate-complaints#2',
        error: null,
      }),
    ]);
  });

  it('answers 503 when told to; the forwarder retries with the same webhook-id, which counts once', async () => {
    sink.failNext(1);
    const forwarder = createForwarder(
      { crm: { url: sink.url, secret: SECRET, retries: 2 } },
      { minDelayMs: 10, maxDelayMs: 20 },
    );
    await forwarder.forward('crm', body('escalate-complaints#2'), 'ev-1|escalate-complaints#2');
    await forwarder.forward('crm', body('escalate-complaints#2'), 'ev-1|escalate-complaints#2');
    const deliveries = sink.deliveries();
    expect(deliveries.map((d) => [d.status, d.duplicate])).toEqual([
      [503, false],
      [200, false],
      [200, true],
    ]);
    expect(new Set(deliveries.map((d) => d.webhookId)).size).toBe(1);
  });

  it.each([
    ['the wrong secret', 'not-the-secret'],
    ['another secret of the same length', 'crm-secret-5d0c7e1a9c'],
  ])('refuses a forward signed with %s (401, recorded as unverified)', async (_name, secret) => {
    const forwarder = createForwarder({ crm: { url: sink.url, secret, retries: 0 } });
    await expect(forwarder.forward('crm', body('x#0'), 'k')).rejects.toThrow('answered HTTP 401');
    expect(sink.deliveries()).toEqual([
      expect.objectContaining({ verified: false, status: 401, error: 'No matching signature found' }),
    ]);
  });

  it.each([
    ['no signature headers', {}],
    ['a tampered body', { 'webhook-id': 'msg_1', 'webhook-timestamp': '1', 'webhook-signature': 'v1,AAAA' }],
  ])('refuses %s', async (_name, headers) => {
    const response = await got.post(sink.url, {
      json: body('x#0'),
      headers,
      throwHttpErrors: false,
      retry: { limit: 0 },
    });
    expect(response.statusCode).toBe(401);
    expect(sink.deliveries()[0]?.verified).toBe(false);
  });

  it('answers 404 off the hooks path', async () => {
    const response = await got(sink.url.replace('/hooks', '/other'), {
      throwHttpErrors: false,
      retry: { limit: 0 },
    });
    expect(response.statusCode).toBe(404);
    expect(sink.deliveries()).toEqual([]);
  });
});
