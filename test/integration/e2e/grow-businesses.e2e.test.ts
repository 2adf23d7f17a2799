import { writeFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { runCli } from '../../../src/cli/run-cli.js';
import { buildTestWebhook } from '../../../src/demo/test-webhook-payload.js';
import type { BridgeProcess } from '../../support/bridge-harness.js';
import { createWorld, E2E, type World } from '../../support/e2e-world.js';

/** The rules both configs share: a greeting once per conversation, a note and a timer per message. */
const RULES = `rules:
  - name: greet
    on: message_in
    then:
      - reply: { text: "Halo, selamat datang!", once_per_conversation: 12h }
  - name: seen
    on: message_in
    then:
      - note: "seen {{event.messageId}}"
      - after: 5s
        unless: agent_reply
        then: [ { note: "remind {{event.messageId}}" } ]
`;

const SHARED = `redis:
  url: \${REDIS_URL}
  prefix: \${REDIS_PREFIX}
worker:
  backoff: { base: 200ms, max: 1s }
${RULES}`;

/** A bridge of one business: no businesses:, the naming of every release before businesses. */
const ONE = `platform:
  base_url: \${PLATFORM_BASE_URL}
  form: current
  auth: { business_id: \${BUSINESS_ID}, secret: \${SECRET_KEY} }
receiver:
  port: \${PORT}
  path: ${E2E.path}
  secrets: [ \${WEBHOOK_SECRET} ]
${SHARED}`;

const B = { businessId: 'biz-b', secret: 'sk-b', webhookSecret: 'wh-b', path: '/webhooks/toko-b' };

/** The same bridge grown to two businesses: toko-a takes over the single business's data. */
const TWO = `platform:
  base_url: \${PLATFORM_BASE_URL}
  form: current
receiver:
  port: \${PORT}
${SHARED}businesses:
  - id: toko-a
    takes_over: default
    platform: { auth: { business_id: \${BUSINESS_ID}, secret: \${SECRET_KEY} } }
    receiver: { path: ${E2E.path}, secrets: [ \${WEBHOOK_SECRET} ] }
  - id: toko-b
    platform: { auth: { business_id: ${B.businessId}, secret: ${B.secret} } }
    receiver: { path: ${B.path}, secrets: [ ${B.webhookSecret} ] }
`;

/** `convo-bridge validate FILE` in this process, with the world's variables. */
async function validate(w: World) {
  const saved = { ...process.env };
  Object.assign(process.env, w.env);
  let err = '';
  try {
    const code = await runCli(['validate', w.configPath], {
      stdout: () => undefined,
      stderr: (t) => (err += t),
    });
    return { code, err };
  } finally {
    for (const name of Object.keys(w.env)) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
  }
}

/**
 * Growing from one business to several, and back: the business that says `takes_over: default`
 * keeps the single business's once-marks, dedupe markers, order and timers, in both directions and
 * without a drain; what a config leaves without a business is held and said (at start, on /readyz,
 * in a metric), and runs at once when a reload brings its business back.
 */
describe('one business grown to two and back (end to end)', () => {
  let world: World | undefined;
  afterEach(async () => {
    await world?.close();
    world = undefined;
  });

  it('repeats nothing and holds nothing silently', { timeout: 120_000 }, async () => {
    world = await createWorld({
      config: ONE,
      emulator: { businesses: [{ businessId: B.businessId, secret: B.secret }] },
    });
    const w = world;
    const base = `http://127.0.0.1:${w.env.PORT}`;
    const b = w.business(B.businessId);
    for (const c of ['c1', 'c2', 'c3']) w.conversation(c, { type: 'telegram' });
    b.conversation('b1', { type: 'telegram' });
    const sent: string[] = [];
    const say = (c: string, text: string) => sent.push(String(w.say(c, text).messageId));
    const postB = (messageId: string) =>
      fetch(`${base}${B.path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: B.webhookSecret },
        body: JSON.stringify(
          buildTestWebhook('catalog', {
            form: 'current',
            nowMs: Date.now(),
            conversationId: 'b1',
            messageId,
          }),
        ),
      });
    const queued = async () =>
      (await w.redis.llen(`${w.layout.all[0]?.queuePrefix}:events:wait`)) +
      (await w.redis.zcard(`${w.layout.all[0]?.queuePrefix}:events:prioritized`));
    const readyz = async () => (await (await fetch(`${base}/readyz`)).json()) as Record<string, unknown>;
    const swap = async (mode: 'start' | 'serve', config: string) => {
      await Promise.all(w.bridges.splice(0).map((bridge) => bridge.stop('SIGTERM')));
      await writeFile(w.configPath, config);
      return w.launch(mode);
    };
    const notes = (c: string) => w.notes(c);
    const all = () => ['c1', 'c2', 'c3'].flatMap(notes);

    // One business, running: greeted, noted, timers pending, once-marks and dedupe markers in place.
    say('c1', 'halo 1');
    say('c2', 'halo 2');
    await waitFor(() => all().filter((n) => n.startsWith('seen')).length === 2, {
      timeoutMs: 15_000,
      what: 'the first notes',
    });
    await waitFor(async () => (await w.timerIds('c1')).length === 1, {
      timeoutMs: 5_000,
      what: 'a timer pending in c1',
    });
    const firstDelivery = w.admin.deliveries()[0]?.id ?? '';

    // Events queued while no worker runs (a receiver alone, same config).
    await swap('serve', ONE);
    say('c1', 'lagi 1');
    say('c3', 'halo 3');
    await waitFor(
      () =>
        w.admin
          .deliveries()
          .slice(-2)
          .every((d) => d.state === 'delivered'),
      {
        timeoutMs: 10_000,
        what: 'two events queued',
      },
    );
    expect(await queued()).toBeGreaterThan(0);

    // Grown to two businesses: toko-a takes over, nothing drained first.
    const grown = await swap('start', TWO);
    expect((await readyz()).held).toBeUndefined();
    // A webhook delivered again after the switch acts nothing: its dedupe marker carried over.
    const again = w.admin.redeliver(firstDelivery);
    await waitFor(() => w.admin.delivery(again.id).state === 'delivered', {
      timeoutMs: 10_000,
      what: 'the redelivery to be answered',
    });
    expect(await (await fetch(`${base}/metrics`)).text()).toContain(
      'convo_bridge_webhooks_total{outcome="duplicate",business="toko-a"} 1',
    );
    expect((await postB('b-1')).status).toBe(200);
    await waitFor(() => b.notes('b1').includes('seen b-1'), { timeoutMs: 15_000, what: "toko-b's note" });
    await waitFor(() => all().filter((n) => n.startsWith('seen')).length === 4, {
      timeoutMs: 15_000,
      what: 'the queued events, run by toko-a',
    });
    expect(grown.logs.join('\n')).not.toContain('held');

    // Events of both businesses queued, then back to one business: toko-b's are held, and said.
    await swap('serve', TWO);
    expect((await postB('b-2')).status).toBe(200);
    expect((await postB('b-3')).status).toBe(200);
    say('c2', 'lagi 2');
    await waitFor(() => w.admin.deliveries().at(-1)?.state === 'delivered', {
      timeoutMs: 10_000,
      what: "the single business's event to be queued",
    });
    // `validate` of the config without businesses says what it would hold, from Redis.
    await Promise.all(w.bridges.splice(0).map((bridge) => bridge.stop('SIGTERM')));
    await writeFile(w.configPath, ONE);
    const checked = await validate(w);
    expect(checked.code).toBe(0);
    expect(checked.err).toMatch(
      /warning: held: 2 events( and 1 timer)? of business "toko-b" wait in Redis at .*: add business toko-b back to the config/,
    );
    const back: BridgeProcess = await w.launch('start');
    await waitFor(() => notes('c2').includes(`seen ${sent.at(-1)}`), {
      timeoutMs: 15_000,
      what: "the single business's event, run after switching back",
    });
    await waitFor(async () => JSON.stringify((await readyz()).held ?? {}).includes('2 events'), {
      timeoutMs: 10_000,
      what: '/readyz to say what is held',
    });
    const held = (await readyz()).held as Record<string, string>;
    expect(held['toko-b']).toMatch(
      /^2 events.* held, this config has no such business: add business toko-b back/,
    );
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toContain('convo_bridge_held{business="toko-b",queue="events"} 2');
    // Said in the log, with the fix (at start, or when the worker first holds them).
    expect(back.logs.join('\n')).toMatch(/of business \\"toko-b\\".* held.*add business toko-b back/);
    expect(b.notes('b1').filter((n) => n.startsWith('seen'))).toEqual(['seen b-1']);

    // toko-b comes back by a reload: its held events run at once, not at a 5-minute recheck.
    await writeFile(w.configPath, TWO);
    await waitFor(() => ['seen b-2', 'seen b-3'].every((n) => b.notes('b1').includes(n)), {
      timeoutMs: 15_000,
      what: "toko-b's held events, run once it is back",
    });
    await waitFor(async () => (await readyz()).held === undefined, {
      timeoutMs: 5_000,
      what: '/readyz to hold nothing',
    });

    // Every action once, after a quiet period that outlasts every timer.
    await waitFor(() => all().filter((n) => n.startsWith('remind')).length === sent.length, {
      timeoutMs: 30_000,
      what: 'one reminder per message',
    });
    await waitFor(() => b.notes('b1').filter((n) => n.startsWith('remind')).length === 3, {
      timeoutMs: 30_000,
      what: 'one reminder per toko-b message',
    });
    await w.settled({ quietMs: 6_000 });
    for (const id of sent) {
      expect(all().filter((n) => n === `seen ${id}`)).toHaveLength(1);
      expect(all().filter((n) => n === `remind ${id}`)).toHaveLength(1);
    }
    expect(all()).toHaveLength(sent.length * 2);
    for (const c of ['c1', 'c2', 'c3']) expect(w.apiMessages(c)).toHaveLength(1);
    expect([...b.notes('b1')].sort()).toEqual([
      'remind b-1',
      'remind b-2',
      'remind b-3',
      'seen b-1',
      'seen b-2',
      'seen b-3',
    ]);
    expect(b.apiMessages('b1')).toHaveLength(1);
  });
});
