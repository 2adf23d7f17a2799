import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { startCrmSink } from '../../support/bridge-harness.js';
import { createWorld, E2E, type World } from '../../support/e2e-world.js';
import { startOtlpReceiver } from '../../support/otlp-receiver.js';

/**
 * Issue 27, item 3: logs (at `info`, and at `debug` too), trace attributes, span events and
 * statuses, and error messages never carry what customers wrote or are called. A real bridge
 * (`start`: receiver and worker) runs against the emulator behind a loopback proxy that misbehaves
 * the way platforms do, with texts, sender names and conversation labels full of a name, a phone
 * number, an e-mail address, a card number and a NIK, through every path that fails: a 4xx that
 * echoes the text we sent, a 5xx that echoes a note, a history page that is not JSON, an
 * acknowledgement without its success marker that echoes the text, a reply the client refuses
 * before sending, a CRM that refuses a forward and echoes it, bodies kept in quarantine
 * (authenticated but not understood, and of an unknown event), plus the happy path with a timer.
 * On the way, a destination that names its `fields` receives only those (issue 27, item 3 too).
 */
const NAME = 'Siti Rahmawati';
const PHONE = '+62 812-3456-7890';
const EMAIL = 'siti.rahma+order@mail.example.co.id';
const CARD = '4111 1111 1111 1111';
const NIK = '3201014508900001';
/** A word that appears only in the customers' texts: any text that reaches a log or span shows it. */
const MARKER = 'Zamrud';
const PERSONAL = `${NAME}, HP ${PHONE}, ${EMAIL}, kartu ${CARD}, NIK ${NIK}`;
const SENDER = `${NAME} (${PHONE}, ${EMAIL})`;
const LABEL = `${NAME} ${CARD} ${NIK}`;

/** What must appear nowhere, including the digits of the numbers however they are written. */
const NEEDLES = [
  'Siti',
  'Rahmawati',
  MARKER,
  '812-3456-7890',
  '81234567890',
  '3456-7890',
  'siti.rahma',
  'example.co.id',
  '1111 1111',
  '1111111111111111',
  NIK,
  '4508900001',
];

function leaks(text: string): string[] {
  return NEEDLES.filter((needle) => text.toLowerCase().includes(needle.toLowerCase()));
}

const CONFIG = `platform:
  base_url: \${PLATFORM_BASE_URL}
  form: current
  auth: { business_id: \${BUSINESS_ID}, secret: \${SECRET_KEY} }
receiver:
  port: \${PORT}
  path: ${E2E.path}
  secrets: [ "\${WEBHOOK_SECRET}" ]
  host: 127.0.0.1
redis:
  url: \${REDIS_URL}
  prefix: \${REDIS_PREFIX}
log: { level: \${LOG_LEVEL} }
worker: { attempts: 2, backoff: { base: 100ms, max: 200ms } }
record: { enabled: true }
destinations:
  crm: { url: "\${CRM_WEBHOOK_URL}", secret: "\${CRM_SECRET}" }
  broken: { url: "\${BROKEN_CRM_URL}", retries: 0 }
  audit: { url: "\${AUDIT_URL}", secret: audit-secret, fields: [ kind, conversationId, occurredAt ] }
rules:
  - name: happy
    on: message_in
    if: { text: { any_keywords: [ refund ] } }
    then:
      - note: "{{customer.name}} menulis: {{event.text}}"
      - need_human: true
      - reply: { text: "Halo {{customer.name}}, pesan Anda: {{event.text}}" }
      - forward: crm
      - forward: audit
      - after: 1s
        unless: agent_reply
        then: [ { note: "Pengingat {{customer.name}}: {{event.text}}" }, { forward: crm } ]
  - name: reply-refused
    on: message_in
    if: { text: { any_keywords: [ balas ] } }
    then: [ { reply: { text: "Halo {{customer.name}}, kami terima: {{event.text}}" } } ]
  - name: note-fails
    on: message_in
    if: { text: { any_keywords: [ catat ] } }
    then: [ { note: "Catatan {{event.conversationLabel}}: {{event.text}}" } ]
  - name: ack-garbled
    on: message_in
    if: { text: { any_keywords: [ akui ] } }
    then: [ { reply: { text: "Terima kasih {{customer.name}}: {{event.text}}" } } ]
  - name: empty-reply
    on: message_in
    if: { text: { any_keywords: [ kosong ] } }
    then: [ { reply: { text: "{{event.caption}}" } } ]
  - name: crm-refuses
    on: message_in
    if: { text: { any_keywords: [ teruskan ] } }
    then: [ { forward: broken } ]
`;

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/**
 * The emulator behind a proxy that answers some calls itself, the way a careless platform does:
 * each of its answers quotes what the bridge sent. Everything else goes through unchanged.
 */
async function startMisbehavingPlatform() {
  let upstream = '';
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    const json = body === '' ? {} : (JSON.parse(body) as { text?: string; note?: string });
    const path = req.url ?? '/';
    if (req.method === 'POST' && path === '/v1/message' && json.text?.includes('balas')) {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 0, rc: 400, error_msg: `message rejected: ${json.text}` }));
      return;
    }
    if (req.method === 'POST' && path === '/v1/message' && json.text?.includes('akui')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: 1, echo: json.text }));
      return;
    }
    if (req.method === 'POST' && path === '/v1/note' && json.note?.includes('catat')) {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`error create note "${json.note}"`);
      return;
    }
    if (req.method === 'GET' && path.startsWith('/v1/message/c-note')) {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<html><body><p>${PERSONAL}</p><p>${MARKER}</p></body></html>`);
      return;
    }
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(
        ([key]) => !['host', 'connection', 'content-length', 'transfer-encoding'].includes(key),
      ),
    ) as Record<string, string>;
    const answer = await fetch(`${upstream}${path}`, {
      method: req.method ?? 'GET',
      headers,
      ...(body === '' ? {} : { body }),
    });
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' });
    res.end(await answer.text());
  });
  const url = await listen(server);
  return {
    url,
    forwardTo(target: string) {
      upstream = target;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A CRM that refuses every forward with a 422 that echoes it. */
async function startRefusingCrm() {
  let received = 0;
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    received += 1;
    res.writeHead(422, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: 'cannot store this event', received: JSON.parse(body) }));
  });
  const url = await listen(server);
  return {
    url: `${url}/hooks`,
    received: () => received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The conversations that fail, by the keyword their text carries. */
const FAILING = [
  ['c-reply', 'balas'],
  ['c-note', 'catat'],
  ['c-ack', 'akui'],
  ['c-empty', 'kosong'],
  ['c-crm', 'teruskan'],
] as const;

describe('no customer data in logs, traces or error messages (issue 27)', () => {
  let world: World | undefined;
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await world?.close();
    world = undefined;
    for (const close of closers.splice(0)) await close();
  });

  it.each(['info', 'debug'])(
    'at log level %s, through every path that fails',
    async (level) => {
      const platform = await startMisbehavingPlatform();
      closers.push(platform.close);
      const crm = await startRefusingCrm();
      closers.push(crm.close);
      const otlp = await startOtlpReceiver();
      closers.push(otlp.close);
      const audit = await startCrmSink('audit-secret');
      closers.push(audit.close);
      world = await createWorld({
        config: CONFIG,
        env: {
          PLATFORM_BASE_URL: platform.url,
          BROKEN_CRM_URL: crm.url,
          AUDIT_URL: audit.url,
          LOG_LEVEL: level,
          OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
          OTEL_BSP_SCHEDULE_DELAY: '100',
        },
      });
      const w = world;
      platform.forwardTo(w.emulator.url);
      const telegram = { type: 'telegram', id: 'ch_tg' };
      for (const [id, keyword] of [['c-ok', 'refund'], ...FAILING] as const) {
        w.conversation(id, telegram, LABEL);
        w.admin.customerMessage(id, { text: `${MARKER} ${keyword}: saya ${PERSONAL}`, senderName: SENDER });
      }
      // Authenticated bodies the receiver cannot understand are kept in quarantine.
      const post = (body: unknown) =>
        fetch(`http://127.0.0.1:${w.env.PORT}${E2E.path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: E2E.webhookSecret },
          body: JSON.stringify(body),
        });
      const misshapen = {
        event: 'channel.message_in',
        conversation_id: 'c-quarantine',
        conversation_label: LABEL,
        message: { id: { not: 'an id' }, sender_name: SENDER, content: { type: 'text', text: PERSONAL } },
      };
      expect((await post(misshapen)).status).toBe(200);
      const unknown = {
        event: 'message.reaction',
        conversation_id: 'c-quarantine',
        text: `${MARKER} ${PERSONAL}`,
      };
      expect((await post(unknown)).status).toBe(200);

      await waitFor(async () => (await w.redis.zcard(w.keys.deadIndex)) === FAILING.length, {
        timeoutMs: 60_000,
        what: `${FAILING.length} dead letters`,
      });
      await waitFor(() => w.notes('c-ok').length === 2 && w.crm.forConversation('c-ok').length === 2, {
        timeoutMs: 20_000,
        what: 'the happy path, its timer included',
      });
      expect(crm.received()).toBe(1);
      // destinations.audit.fields: the audit CRM got the three fields it names and no text or name.
      await waitFor(() => audit.requests.length === 1, { timeoutMs: 10_000, what: 'the audit forward' });
      const forwarded = JSON.parse(audit.requests[0]?.body ?? '') as { event: Record<string, unknown> };
      expect(Object.keys(forwarded.event).sort()).toEqual(['conversationId', 'kind', 'occurredAt']);
      expect(forwarded.event).toMatchObject({ kind: 'message_in', conversationId: 'c-ok' });
      expect(audit.requests[0]?.verified).toBe(true);
      expect(leaks(audit.requests[0]?.body ?? '')).toEqual([]);
      // The CRM that names no fields got the whole event, texts and names included.
      expect(leaks(w.crm.forConversation('c-ok')[0]?.body ?? '')).toContain(MARKER);
      // Stopping exports what is left of the spans.
      for (const bridge of w.bridges) expect(await bridge.stop('SIGTERM')).toBe(0);

      const lines = w.bridges.flatMap((b) => b.logs);
      expect(lines.filter((line) => leaks(line).length > 0)).toEqual([]);
      const log = lines.join('\n');
      // The failures were logged, with the platform's own words, and with what matters to operators.
      for (const expected of [
        'action failed for good',
        'moved to the dead-letter set',
        'webhook kept in quarantine',
        'message rejected: […]',
        'c-reply',
        'reply-refused#0',
      ]) {
        expect(log).toContain(expected);
      }
      if (level === 'debug') expect(log).toContain('"level":20');

      const spans = otlp.bodies.join('\n');
      expect(otlp.spans.some((s) => s.attributes['convo_bridge.conversation_id'] === 'c-reply')).toBe(true);
      // Failed runs and calls were traced as errors, with their exceptions recorded.
      expect(otlp.spans.filter((s) => s.status === 2).length, spans).toBeGreaterThan(0);
      expect(spans).toContain('exception');
      expect(leaks(spans)).toEqual([]);
    },
    150_000,
  );
});
