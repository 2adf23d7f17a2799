import { writeFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { buildTestWebhook } from '../../../src/demo/test-webhook-payload.js';
import { type EmulatorHandle, startEmulator } from '../../../src/emulator/start-emulator.js';
import { createWorld, type World } from '../../support/e2e-world.js';

const IDS = ['toko-a', 'toko-b', 'toko-c'] as const;
const businessOf = (id: string) => ({
  id,
  businessId: `biz-${id}`,
  secret: `sk-${id}`,
  webhookSecret: `wh-${id}`,
  path: `/webhooks/${id}`,
});

const CONFIG = `
platform:
  base_url: \${PLATFORM_BASE_URL}
  form: current
receiver:
  port: \${PORT}
redis:
  url: \${REDIS_URL}
  prefix: \${REDIS_PREFIX}
worker:
  backoff: { base: 200ms, max: 1s }
rules:
  - name: escalate
    on: message_in
    if: { text: { any_keywords: [ refund ] } }
    then:
      - note: "Escalated {{event.messageId}}: {{match.keyword}} ({{event.text}})"
      - need_human: true
    stop: true
  - name: seen
    on: message_in
    then:
      - note: "seen {{event.messageId}}: {{event.text}}"
businesses:
${IDS.map((id) => {
  const b = businessOf(id);
  return `  - id: ${id}
    platform: { auth: { business_id: ${b.businessId}, secret: ${b.secret} } }
    receiver: { path: ${b.path}, secrets: [ ${b.webhookSecret} ] }`;
}).join('\n')}
`;

const MESSAGES = 30;
const CONVERSATIONS = 6;

/**
 * Three businesses in one bridge (issue 26), each with its own platform account on one emulator
 * that checks each request's credentials: the same conversation and message ids sent to all three
 * at once, with 10% redeliveries, give every action once per business, each made with its own
 * business's credentials; another business's webhook secret is refused.
 */
describe('three businesses in one bridge (end to end)', () => {
  let world: World | undefined;
  afterEach(async () => {
    await world?.close();
    world = undefined;
  });

  it('adds, changes and removes businesses when the config file changes, without a restart', async () => {
    const [first, second] = IDS.map(businessOf);
    if (!first || !second) throw new Error('no business');
    const other: EmulatorHandle = await startEmulator({
      businessId: 'biz-other',
      secret: 'sk-other',
      form: 'current',
    });
    try {
      const twoOnly = CONFIG.replace(/ {2}- id: toko-c[\s\S]*$/, '');
      world = await createWorld({
        config: twoOnly,
        emulator: {
          businessId: first.businessId,
          secret: first.secret,
          businesses: [{ businessId: second.businessId, secret: second.secret }],
        },
      });
      const w = world;
      const base = `http://127.0.0.1:${w.env.PORT}`;
      const post = (path: string, secret: string, body: unknown) =>
        fetch(`${base}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: secret },
          body: JSON.stringify(body),
        });
      const webhook = (id: string) =>
        buildTestWebhook('catalog', {
          form: 'current',
          nowMs: Date.now(),
          conversationId: 'conv-x',
          messageId: id,
        });
      // /readyz says how each business is.
      const ready = (await (await fetch(`${base}/readyz`)).json()) as { businesses?: Record<string, string> };
      expect(ready.businesses).toEqual({ 'toko-a': 'ok', 'toko-b': 'ok' });

      // Add toko-new on another platform (its own base URL and account), remove toko-b.
      other.admin.createConversation({ id: 'conv-x', label: 'Budi', channel: { type: 'telegram' } as never });
      const changed = `${twoOnly.replace(/ {2}- id: toko-b[\s\S]*$/, '')}  - id: toko-new
    platform: { base_url: "${other.url}", auth: { business_id: biz-other, secret: sk-other } }
    receiver: { path: /webhooks/toko-new, secrets: [ wh-new ] }
`;
      await writeFile(w.configPath, changed);
      await waitFor(
        async () => (await post('/webhooks/toko-new', 'wh-new', webhook('m-new-1'))).status === 200,
        { timeoutMs: 10_000, what: 'the added business to receive webhooks' },
      );
      await waitFor(() => other.admin.conversation('conv-x').notes.length === 1, {
        timeoutMs: 10_000,
        what: "the added business's note, on its own platform",
      });
      expect((await post(second.path, second.webhookSecret, webhook('m-b-1'))).status).toBe(404);
      expect((await post(first.path, first.webhookSecret, webhook('m-a-1'))).status).toBe(200);
      // Its call went to its own base URL with its own credentials; none reached the first emulator.
      expect(other.admin.requests().every((r) => r.authenticated)).toBe(true);
      expect(w.admin.requests().filter((r) => JSON.stringify(r.body ?? '').includes('m-new-1'))).toHaveLength(
        0,
      );
    } finally {
      await other.close();
    }
  });

  it('acts once per business with its own credentials; the same ids never mix; another secret is refused', async () => {
    const [first, ...others] = IDS.map(businessOf);
    if (!first) throw new Error('no business');
    world = await createWorld({
      config: CONFIG,
      emulator: {
        businessId: first.businessId,
        secret: first.secret,
        businesses: others.map((b) => ({ businessId: b.businessId, secret: b.secret })),
      },
    });
    const w = world;
    const base = `http://127.0.0.1:${w.env.PORT}`;
    for (const id of IDS) {
      const driver = w.business(businessOf(id).businessId);
      for (let c = 0; c < CONVERSATIONS; c++) driver.conversation(`conv-${c}`, { type: 'telegram' });
    }
    const post = (id: string, secret: string, body: unknown) =>
      fetch(`${base}${businessOf(id).path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: secret },
        body: JSON.stringify(body),
      });
    // The same conversation and message ids for every business, each business's own text: an event
    // run with another business's context (or its note sent to another's account) shows in the text.
    const textOf = (id: string, i: number) => `${i % 3 === 0 ? 'mau refund' : 'ada katalog'} ${id} ${i}`;
    const bodyOf = (id: string, i: number) => {
      const body = buildTestWebhook(i % 3 === 0 ? 'complaint' : 'catalog', {
        form: 'current',
        nowMs: Date.now(),
        conversationId: `conv-${i % CONVERSATIONS}`,
        messageId: `m-${i}`,
      }) as { message: { content: { text: string } } };
      body.message.content.text = textOf(id, i);
      return body;
    };
    // Every message to the three businesses at once; one in ten delivered twice, racing its original.
    const sends: Promise<Response>[] = [];
    for (let i = 0; i < MESSAGES; i++) {
      for (const id of IDS) {
        const b = businessOf(id);
        const body = bodyOf(id, i);
        sends.push(post(id, b.webhookSecret, body));
        if (i % 10 === 0) sends.push(post(id, b.webhookSecret, body));
      }
    }
    const answers = await Promise.all(sends);
    expect(answers.map((a) => a.status).every((s) => s === 200)).toBe(true);

    const notesOf = (id: string) =>
      Array.from({ length: CONVERSATIONS }, (_, c) =>
        w.business(businessOf(id).businessId).notes(`conv-${c}`),
      ).flat();
    await waitFor(() => IDS.every((id) => notesOf(id).length >= MESSAGES), {
      timeoutMs: 30_000,
      what: 'one note per message in every business',
    });
    // Exactly once holds after a quiet period (every business's queue, deliveries and requests), not
    // at the first sighting.
    await w.settled({ quietMs: 2_000 });
    for (const id of IDS) {
      const notes = notesOf(id);
      expect(notes).toHaveLength(MESSAGES);
      expect(new Set(notes).size).toBe(MESSAGES);
      for (let i = 0; i < MESSAGES; i++) {
        const own = notes.filter((n) => n.startsWith(`seen m-${i}: `) || n.startsWith(`Escalated m-${i}: `));
        expect(own).toHaveLength(1);
        expect(own[0]).toContain(textOf(id, i));
      }
      // No note of this business's account carries another business's text.
      for (const other of IDS.filter((o) => o !== id)) {
        expect(notes.filter((n) => n.includes(` ${other} `))).toEqual([]);
      }
      const driver = w.business(businessOf(id).businessId);
      const needHuman = driver.requests('needHuman');
      expect(needHuman.length).toBe(MESSAGES / 3);
      // Every call this business's platform account saw came with its own credentials and was accepted.
      const requests = driver.admin.requests();
      expect(requests.length).toBeGreaterThan(0);
      expect(requests.every((r) => r.authenticated && r.httpStatus === 200 && r.rc === null)).toBe(true);
    }

    // Another business's valid secret is refused on this business's path.
    const refused = await post('toko-a', businessOf('toko-b').webhookSecret, bodyOf('toko-a', 0));
    expect(refused.status).toBe(401);
    // A path of no business: 404.
    const nowhere = await fetch(`${base}/webhooks/platform`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: first.webhookSecret },
      body: JSON.stringify(bodyOf('toko-a', 0)),
    });
    expect(nowhere.status).toBe(404);
  });
});
