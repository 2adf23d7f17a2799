import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { buildTestWebhook } from '../../../src/demo/test-webhook-payload.js';
import { businessNaming } from '../../../src/events/business-naming.js';
import { exampleConfig } from '../../support/bridge-harness.js';
import { cli } from '../../support/cli-in-process.js';
import { createWorld, type World } from '../../support/e2e-world.js';
import { everyKeyAndValue, keysHolding } from '../../support/scan-redis.js';

// Issue 27: forget is safe while the bridge runs. A conversation's events that are queued or in
// flight finish first (their actions happen once, none is dropped or repeated), then its data goes
// and nothing writes it back; with no worker to finish them, forget refuses and erases nothing.
// And `--customer` finds conversations by a phone number written another way, or an address.

const TOKEN = randomUUID().slice(0, 8);

describe('forget while the bridge runs', () => {
  let world: World | undefined;
  afterEach(async () => {
    await world?.close();
    world = undefined;
  });

  const flags = (w: World) => ['--redis-url', w.env.REDIS_URL as string, '--prefix', w.prefix];

  it("finishes the conversation's queued and running events first, then erases; nothing comes back", async () => {
    world = await createWorld({ config: await exampleConfig({ hours: 'open', timer: '10m' }) });
    const w = world;
    const id = `c-busy-${TOKEN}`;
    // Every note takes 1.5 s: three complaints keep the conversation busy for about 5 s.
    w.admin.addFault({ type: 'latency', latencyMs: 1_500, endpoint: 'note' });
    w.conversation(id, { type: 'telegram', id: 'ch_tg' });
    for (let i = 0; i < 3; i++) w.say(id, `Saya mau refund ${i}`);
    await waitFor(() => w.requests('note', id).length > 0, { timeoutMs: 10_000, what: 'the first note' });

    const run = await cli(['forget', ...flags(w), '--conversation', id]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/waited \d/);
    expect(run.stdout).toMatch(/timer jobs\s+3/);
    // Every event ran to its end, once: three notes, three need-human calls, three forwards.
    expect(w.notes(id)).toHaveLength(3);
    expect(w.requests('needHuman', id)).toHaveLength(3);
    await w.settled({ quietMs: 2_000 });
    expect(w.notes(id)).toHaveLength(3);
    expect(w.crm.requests).toHaveLength(3);
    expect(Object.fromEntries(keysHolding(await everyKeyAndValue(w.redis), [id]))).toEqual({});
  });

  it('with no worker to finish its events, refuses with the reason and erases nothing', async () => {
    world = await createWorld({ config: await exampleConfig({ hours: 'open' }), processes: ['serve'] });
    const w = world;
    const id = `c-stuck-${TOKEN}`;
    w.conversation(id, { type: 'telegram', id: 'ch_tg' });
    w.say(id, 'halo kak');
    // Queued means both stored writes of ingest are there: its place in the conversation's order,
    // and then its batch job (added after the ingest script): the job holds the conversation's id.
    await waitFor(
      async () =>
        (await w.redis.zcard(w.keys.order(id))) === 1 &&
        (await w.redis.llen(w.queueKey(id, 'events', 'wait'))) === 1,
      { timeoutMs: 10_000, what: 'the event queued' },
    );
    const before = keysHolding(await everyKeyAndValue(w.redis), [id]);
    expect(before.size).toBeGreaterThan(0);

    const refused = await cli(['forget', ...flags(w), '--conversation', id, '--wait', '1s']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      `conversation "${id}" still has 1 event(s) or timer(s) queued or running`,
    );
    expect(refused.stderr).toContain('nothing of it was erased');
    expect(refused.stderr).toContain('Is the worker running');
    expect(keysHolding(await everyKeyAndValue(w.redis), [id])).toEqual(before);

    await w.launch('work');
    const done = await cli(['forget', ...flags(w), '--conversation', id, '--wait', '30s']);
    expect(done.code, done.stderr).toBe(0);
    expect(Object.fromEntries(keysHolding(await everyKeyAndValue(w.redis), [id]))).toEqual({});
  });

  it('--customer finds the conversations by phone (written another way) or address, and only those', async () => {
    const config = `${await exampleConfig({ hours: 'open', timer: '10m' })}record:\n  enabled: true\n`;
    world = await createWorld({ config });
    const w = world;
    const [byPhone, byMail, other] = ['phone', 'mail', 'other'].map((s) => `c-cust-${s}-${TOKEN}`) as [
      string,
      string,
      string,
    ];
    const email = `Sari.${TOKEN}@Example.co.id`;
    w.conversation(byPhone, { type: 'telegram', id: 'ch_tg' });
    w.say(byPhone, 'refund dong, WA saya 0813 9876 5432');
    w.conversation(byMail, { type: 'telegram', id: 'ch_tg' }, `Sari <${email}>`);
    w.say(byMail, 'minta katalog');
    w.conversation(other, { type: 'telegram', id: 'ch_tg' });
    w.say(other, 'refund, nomor 0813 9876 5400');
    await waitFor(async () => (await w.redis.zcard(w.keys.recordedIndex)) === 3, {
      timeoutMs: 15_000,
      what: 'three recorded events',
    });
    await w.settled({ quietMs: 500 });

    const dry = await cli(['forget', ...flags(w), '--customer', '+62 813-9876-5432', '--dry-run', '--json']);
    expect(dry.code, dry.stderr).toBe(0);
    const planned = JSON.parse(dry.stdout);
    expect(planned.customers[0].matches.conversations).toEqual([byPhone]);
    expect(planned.conversations.map((c: { conversationId: string }) => c.conversationId)).toEqual([byPhone]);
    expect(keysHolding(await everyKeyAndValue(w.redis), [byPhone]).size).toBeGreaterThan(0);

    const run = await cli([
      'forget',
      ...flags(w),
      '--customer',
      '+62 813-9876-5432',
      '--customer',
      email.toLowerCase(),
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`customer "${email.toLowerCase()}": held by 1 conversation(s): ${byMail}`);
    expect(
      Object.fromEntries(keysHolding(await everyKeyAndValue(w.redis), [byPhone, byMail, email])),
    ).toEqual({});
    expect(await w.redis.exists(w.keys.conversation(other))).toBe(1);
    expect(await w.redis.zcard(w.keys.recordedIndex)).toBe(1);

    const bad = await cli(['forget', ...flags(w), '--customer', '12345']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('neither a phone number');
  });
  it("with businesses, --business erases one business's conversation and not another's of the same id", async () => {
    const config = `
platform:
  base_url: \${PLATFORM_BASE_URL}
  form: current
receiver:
  port: \${PORT}
redis:
  url: \${REDIS_URL}
  prefix: \${REDIS_PREFIX}
record:
  enabled: true
rules:
  - name: escalate
    on: message_in
    if: { text: { any_keywords: [ refund ] } }
    then: [ { note: "Escalated {{event.messageId}}" }, { need_human: true } ]
businesses:
${['a', 'b'].map((x) => `  - id: toko-${x}\n    platform: { auth: { business_id: biz-${x}, secret: sk-${x} } }\n    receiver: { path: /webhooks/toko-${x}, secrets: [ wh-${x} ] }`).join('\n')}
`;
    world = await createWorld({
      config,
      emulator: {
        businessId: 'biz-a',
        secret: 'sk-a',
        businesses: [{ businessId: 'biz-b', secret: 'sk-b' }],
      },
    });
    const w = world;
    const id = `c-shared-${TOKEN}`;
    for (const x of ['a', 'b']) {
      w.business(`biz-${x}`).conversation(id, { type: 'telegram' });
      const body = buildTestWebhook('complaint', {
        form: 'current',
        nowMs: Date.now(),
        conversationId: id,
        messageId: `msg-${x}-${TOKEN}`,
      });
      const answer = await fetch(`http://127.0.0.1:${w.env.PORT}/webhooks/toko-${x}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `wh-${x}` },
        body: JSON.stringify(body),
      });
      expect(answer.status).toBe(200);
    }
    const keysOf = (x: string) => w.layout.forNaming(businessNaming(`toko-${x}`, false));
    const conv = (x: string) => keysOf(x).shardOf(id).keys.conversation(id);
    await waitFor(
      async () =>
        (await w.redis.exists(conv('a'), conv('b'))) === 2 &&
        (await w.redis.zcard(keysOf('a').global.recordedIndex)) === 1 &&
        (await w.redis.zcard(keysOf('b').global.recordedIndex)) === 1,
      { timeoutMs: 15_000, what: "both businesses' conversations" },
    );
    await w.settled({ quietMs: 500 });

    const run = await cli(['forget', ...flags(w), '--business', 'toko-a', '--conversation', id]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('business toko-a');
    expect(await w.redis.exists(conv('a'))).toBe(0);
    expect(await w.redis.zcard(keysOf('a').global.recordedIndex)).toBe(0);
    expect(await w.redis.exists(conv('b'))).toBe(1);
    expect(await w.redis.zcard(keysOf('b').global.recordedIndex)).toBe(1);
    // Batches held both businesses' events: a's are gone from every value, b's are still there.
    const all = await everyKeyAndValue(w.redis);
    expect(Object.fromEntries(keysHolding(all, [`msg-a-${TOKEN}`]))).toEqual({});
    expect(keysHolding(all, [`msg-b-${TOKEN}`]).size).toBeGreaterThan(0);
  });
});
