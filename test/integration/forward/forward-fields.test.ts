import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfigText } from '../../../src/config/load-config.js';
import { createForwarder } from '../../../src/forward/forward-event.js';
import { makeEvent } from '../../support/make-event.js';

/**
 * Issue 27: a destination that names `fields` gets only those fields of the event, through the
 * config as a user writes it, over real HTTP on loopback, signed over what it received.
 */
const SECRET = 'audit-secret-1';

async function startReceiver() {
  const received: { headers: IncomingHttpHeaders; body: string }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('destinations.NAME.fields over real HTTP', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeEach(async () => {
    receiver = await startReceiver();
  });
  afterEach(async () => {
    await receiver.close();
  });

  it('the named fields only, to the destination that names them; the whole event to the other', async () => {
    const { config } = parseConfigText(
      `platform:
  base_url: https://api.example.com
  auth: { business_id: b, secret: s }
receiver:
  secrets: [ w ]
destinations:
  audit:
    url: "${receiver.url}"
    secret: "${SECRET}"
    retries: 0
    fields: [ occurredAt, kind, conversationId, channel ]
  full: { url: "${receiver.url}", retries: 0 }
`,
      { fileName: 'fields.yaml', env: {} },
    );
    const forwarder = createForwarder(config.destinations);
    const event = makeEvent({ text: 'Halo, saya Siti, HP 0812 3456 7890', senderName: 'Siti' });
    const body = { type: 'convo_bridge.event' as const, rule: 'r', action: 'r#0', event };
    expect(await forwarder.forward('audit', body, 'k|r#0')).toEqual({ status: 204 });
    expect(await forwarder.forward('full', body, 'k|r#0')).toEqual({ status: 204 });

    const [audit, full] = receiver.received;
    expect(JSON.parse(audit?.body ?? '')).toEqual({
      type: 'convo_bridge.event',
      rule: 'r',
      action: 'r#0',
      event: {
        kind: 'message_in',
        conversationId: event.conversationId,
        channel: event.channel,
        occurredAt: event.occurredAt,
      },
    });
    expect(audit?.body).not.toContain('Siti');
    // The signature covers the body as sent.
    expect(() =>
      new Webhook(SECRET, { format: 'raw' }).verify(audit?.body ?? '', {
        'webhook-id': String(audit?.headers['webhook-id']),
        'webhook-timestamp': String(audit?.headers['webhook-timestamp']),
        'webhook-signature': String(audit?.headers['webhook-signature']),
      }),
    ).not.toThrow();
    expect(JSON.parse(full?.body ?? '')).toEqual(body);
  });
});
