import { Queue } from 'bullmq';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { runCli } from '../../../src/cli/run-cli.js';
import { buildTestWebhook } from '../../../src/demo/test-webhook-payload.js';
import type { RedisServerHandle } from '../../../src/redis/start-redis-server.js';
import { type BridgeProcess, spawnBridge, spawnBridgeFrom } from '../../support/bridge-harness.js';
import { type BusinessDriver, createWorld, E2E, type World } from '../../support/e2e-world.js';
import { type PreviousRelease, previousCli, previousRelease } from '../../support/previous-release.js';
import { startRedisServer } from '../../support/redis.js';

/**
 * A Redis holding a running bridge's data from the previous release (named in
 * previous-release.txt, built from git by test/support/previous-release.ts) is served by this
 * checkout's code with every action once. The previous release runs as a receiver and a worker;
 * it greets (a once-mark), tags, escalates (note, need-human, CRM forward), sets a timer due in an
 * hour and dead-letters an action the platform refuses for good; then its worker stops and more
 * events stay queued behind its receiver. This checkout's `start` takes over the same Redis, and
 * the calls the emulator and the CRM saw say what it did. Once without `businesses:`, once with two.
 *
 * What the test knows of the previous release's data it names as that release did (BullMQ's
 * `<prefix>:events:*` and `<prefix>:timers:*` keys of one untagged shard, the layout of a single
 * Redis): it stands where that release left its data, so a change to this checkout's key names
 * cannot move the test's view along with it.
 */

const RULES = `rules:
  - name: mark-vip
    on: message_in
    if: { text: { any_keywords: [ "member gold" ] } }
    then: [ { tag: vip, for: 30d }, { note: "VIP noted" } ]
    stop: true
  - name: vip-complaint
    on: message_in
    if: { tags: { any: [ vip ] }, text: { any_keywords: [ kecewa ] } }
    then: [ { note: "VIP complaint" }, { forward: crm } ]
    stop: true
  - name: complaint
    on: message_in
    if: { text: { any_keywords: [ kecewa, refund ] } }
    then: [ { note: "Complaint: {{match.keyword}}" }, { need_human: true }, { forward: crm } ]
    stop: true
  - name: sla
    on: message_in
    if: { text: { any_keywords: [ tunggu ] } }
    then:
      - after: 1h
        then: [ { note: "An hour without an answer" } ]
    stop: true
  - name: greet
    on: message_in
    if: { text: { any_keywords: [ halo ] } }
    then: [ { reply: { text: "Halo! Tim kami segera membalas.", once_per_conversation: 12h } } ]
`;

const COMMON = `redis:
  url: \${REDIS_URL}
  prefix: \${REDIS_PREFIX}
timezone: Asia/Jakarta
business_hours:
  weekly: { mon-sun: "00:00-24:00" }
destinations:
  crm: { url: "\${CRM_WEBHOOK_URL}", secret: "\${CRM_SECRET}" }
worker:
  backoff: { base: 200ms, max: 1s }
${RULES}`;

/** A config without `businesses:`, its one business given by the environment the world sets. */
const ONE_BUSINESS = `platform:
  base_url: \${PLATFORM_BASE_URL}
  form: current
  auth: { scheme: headers, business_id: \${BUSINESS_ID}, secret: \${SECRET_KEY} }
receiver:
  port: \${PORT}
  host: 127.0.0.1
  path: ${E2E.path}
  secrets: [ "\${WEBHOOK_SECRET}" ]
${COMMON}`;

const TWO = ['toko-a', 'toko-b'] as const;
const accountOf = (id: string) => ({
  businessId: `biz-${id}`,
  secret: `sk-${id}`,
  webhookSecret: `wh-${id}`,
  path: `/webhooks/${id}`,
});

const TWO_BUSINESSES = `platform:
  base_url: \${PLATFORM_BASE_URL}
  form: current
receiver:
  port: \${PORT}
  host: 127.0.0.1
${COMMON}businesses:
${TWO.map((id) => {
  const a = accountOf(id);
  return `  - id: ${id}
    platform: { auth: { business_id: ${a.businessId}, secret: ${a.secret} } }
    receiver: { path: ${a.path}, secrets: [ ${a.webhookSecret} ] }`;
}).join('\n')}
`;

/** One business as the test plays it: its config id (null: none), emulator account and webhook. */
interface Business {
  readonly id: string | null;
  readonly driver: BusinessDriver;
  readonly path: string;
  readonly webhookSecret: string;
  /** Conversation id of a role, distinct across businesses (the CRM sink sees them all). */
  conv(role: string): string;
}

const ROLES = ['greet', 'vip', 'refund', 'timer', 'ghost', 'fresh', 'plain'] as const;

async function cli(argv: string[]) {
  let out = '';
  let err = '';
  const code = await runCli(argv, { stdout: (t) => (out += t), stderr: (t) => (err += t) });
  return { code, out, err };
}

/** Jobs of a queue of the previous release's layout that are not done: waiting, running, delayed. */
async function unfinished(w: World, queue: 'events' | 'timers', states: readonly string[]): Promise<number> {
  let total = 0;
  for (const state of states) {
    const key = `${w.prefix}:${queue}:${state}`;
    total += state === 'wait' || state === 'active' ? await w.redis.llen(key) : await w.redis.zcard(key);
  }
  return total;
}
const ALL_STATES = ['wait', 'active', 'delayed', 'prioritized'] as const;

/**
 * Waits until no event job is left (and no timer job waits or runs) and neither the platform (any
 * business) nor the CRM saw a new call for `quietMs`; "exactly once" is judged after that, not at
 * the first sighting.
 */
async function settled(w: World, businesses: readonly Business[], what: string, quietMs = 3_000) {
  const outside = () =>
    `${businesses.map((b) => b.driver.admin.requests().length).join('/')}/${w.crm.requests.length}`;
  let seen = outside();
  let quietSince = Date.now();
  await waitFor(
    async () => {
      const busy =
        (await unfinished(w, 'events', ALL_STATES)) + (await unfinished(w, 'timers', ['wait', 'active']));
      const now = outside();
      if (busy > 0 || now !== seen) {
        seen = now;
        quietSince = Date.now();
        return false;
      }
      return Date.now() - quietSince >= quietMs;
    },
    { timeoutMs: 45_000, intervalMs: 100, what },
  );
}

/** Successful calls of an endpoint about a conversation, as the emulator logged them. */
function calls(b: Business, endpoint: 'send' | 'note' | 'needHuman', role: string) {
  return b.driver.requests(endpoint, b.conv(role)).filter((r) => r.httpStatus === 200 && r.rc === null)
    .length;
}

/** A webhook for a conversation the platform does not know: its note is refused for good. */
async function postGhost(w: World, b: Business): Promise<void> {
  const body = buildTestWebhook('complaint', {
    form: 'current',
    nowMs: Date.now(),
    conversationId: b.conv('ghost'),
    messageId: `msg-${b.conv('ghost')}`,
  });
  const response = await fetch(`http://127.0.0.1:${w.env.PORT}${b.path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: b.webhookSecret },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
}

function redisArgs(w: World): string[] {
  return ['--redis-url', w.env.REDIS_URL ?? '', '--prefix', w.prefix];
}

function businessArgs(b: Business): string[] {
  return b.id === null ? [] : ['--business', b.id];
}

/** Every webhook the emulator sent so far answered 200 by a receiver. */
async function webhooksDelivered(businesses: readonly Business[]) {
  await waitFor(
    async () => {
      for (const b of businesses) await b.driver.admin.deliveriesSettled();
      return businesses.every((b) => b.driver.admin.deliveries().every((d) => d.state === 'delivered'));
    },
    { timeoutMs: 15_000, what: 'every webhook to be delivered' },
  );
}

/**
 * The upgrade: the previous release's receiver and worker leave data behind, this checkout serves
 * it; returns once everything has settled, for the caller to count the calls.
 */
async function upgrade(w: World, release: PreviousRelease, businesses: readonly Business[]) {
  for (const b of businesses) {
    for (const role of ROLES) if (role !== 'ghost') b.driver.conversation(b.conv(role), { type: 'telegram' });
  }
  const old = async (mode: 'serve' | 'work') => {
    const bridge = await spawnBridgeFrom(release.cli, mode, w.configPath, w.env);
    w.bridges.push(bridge);
    return bridge;
  };
  const [oldReceiver, oldWorker] = await Promise.all([old('serve'), old('work')]);

  // 1. The previous release acts: a greeting (its once-mark), a tag, an escalation, a timer due in
  //    an hour, and a dead letter.
  for (const b of businesses) {
    b.driver.say(b.conv('greet'), 'Halo kak');
    b.driver.say(b.conv('vip'), 'Saya member gold');
    b.driver.say(b.conv('refund'), 'Saya minta refund');
    b.driver.say(b.conv('timer'), 'Tolong tunggu sebentar');
    await postGhost(w, b);
  }
  const firstActs = async () => ({
    calls: businesses.map((b) => ({
      greeted: calls(b, 'send', 'greet'),
      tagged: calls(b, 'note', 'vip'),
      escalated: calls(b, 'needHuman', 'refund'),
      refused: b.driver.requests('note', b.conv('ghost')).length,
    })),
    forwards: w.crm.requests.length,
    timers: await unfinished(w, 'timers', ['delayed']),
    events: await unfinished(w, 'events', ALL_STATES),
  });
  const expected = {
    calls: businesses.map(() => ({ greeted: 1, tagged: 1, escalated: 1, refused: 1 })),
    forwards: 2 * businesses.length,
    timers: businesses.length,
    events: 0,
  };
  await waitFor(async () => JSON.stringify(await firstActs()) === JSON.stringify(expected), {
    timeoutMs: 30_000,
    what: 'the previous release to act on the first events',
  }).catch(async (error: unknown) => {
    throw new Error(
      `${String(error)}\nexpected ${JSON.stringify(expected)}\nfound    ${JSON.stringify(await firstActs())}\n${w.bridges
        .flatMap((b) => b.logs.slice(-15))
        .join('\n')}`,
    );
  });
  await stop(oldWorker, 'the worker of the previous release');

  // 2. More events reach the previous release's receiver and stay queued: its worker is gone.
  for (const b of businesses) {
    b.driver.say(b.conv('greet'), 'Halo lagi, masih di sana?');
    b.driver.say(b.conv('vip'), 'Saya kecewa, paket belum sampai');
    b.driver.say(b.conv('fresh'), 'Halo');
    b.driver.say(b.conv('plain'), 'Saya kecewa');
  }
  await webhooksDelivered(businesses);
  const before = businesses.map((b) => b.driver.admin.requests().length);
  expect(
    await unfinished(w, 'events', ALL_STATES),
    'events queued behind the stopped worker',
  ).toBeGreaterThan(0);
  // What the previous release says it left: one dead letter and one pending timer per business.
  const oldCli = await previousCli(release);
  for (const b of businesses) {
    const dead = await oldCli(['dlq', ...redisArgs(w), ...businessArgs(b), 'list', '--json']);
    expect(dead.code, dead.err).toBe(0);
    expect(JSON.parse(dead.out)).toEqual([expect.objectContaining({ conversationId: b.conv('ghost') })]);
  }
  await stop(oldReceiver, 'the receiver of the previous release');
  expect(businesses.map((b) => b.driver.admin.requests().length)).toEqual(before);

  // 3. This checkout takes over the same Redis.
  w.bridges.push(await spawnBridge('start', w.configPath, w.env));

  // The timer is due: time passing, without waiting an hour, is BullMQ promoting the delayed job.
  const timers = new Queue('timers', { connection: w.redis, prefix: w.prefix });
  try {
    const delayed = await timers.getDelayed();
    expect(delayed).toHaveLength(businesses.length);
    for (const job of delayed) await job.promote();
  } finally {
    await timers.close();
  }
  await waitShowingCalls(
    w,
    businesses,
    () => businesses.every((b) => calls(b, 'note', 'timer') === 1),
    'the pending timers to fire',
  );

  // Webhooks delivered again: one the previous release acted on, one it queued and this checkout
  // acted on. The receiver knows both.
  for (const b of businesses) {
    for (const role of ['refund', 'plain']) {
      const delivery = b.driver.admin.deliveries().find((d) => d.conversationId === b.conv(role));
      if (delivery === undefined) throw new Error(`no webhook delivery of ${b.conv(role)}`);
      b.driver.admin.redeliver(delivery.id);
    }
  }
  await webhooksDelivered(businesses);

  // The dead letter is listed by this checkout and replays once the platform knows the conversation.
  const dlq = ['dlq', ...redisArgs(w)];
  for (const b of businesses) {
    const listed = await cli([...dlq, ...businessArgs(b), 'list', '--json']);
    expect(listed.code, listed.err).toBe(0);
    const entries = JSON.parse(listed.out) as { id: string; conversationId: string; queue: string }[];
    expect(entries).toEqual([expect.objectContaining({ queue: 'events', conversationId: b.conv('ghost') })]);
    const [entry] = entries;
    if (entry === undefined) throw new Error('no dead letter');
    b.driver.conversation(b.conv('ghost'), { type: 'telegram' });
    const retried = await cli([...dlq, ...businessArgs(b), 'retry', entry.id]);
    expect(retried.code, retried.err).toBe(0);
    await waitShowingCalls(
      w,
      businesses,
      () => calls(b, 'note', 'ghost') === 1 && calls(b, 'needHuman', 'ghost') === 1,
      `the replay of ${b.conv('ghost')}`,
    );
    // Once: the same dead letter cannot be replayed a second time.
    expect((await cli([...dlq, ...businessArgs(b), 'retry', entry.id])).code).not.toBe(0);
  }
  await settled(w, businesses, 'the queued events, timers, redeliveries and replays to be done');
  expect(await unfinished(w, 'timers', ALL_STATES), 'timer jobs left').toBe(0);
}

async function stop(bridge: BridgeProcess, what: string) {
  const code = await bridge.stop('SIGTERM');
  expect(code, `${what} should stop cleanly:\n${bridge.logs.slice(-20).join('\n')}`).toBe(0);
}

/** The calls each conversation of a business caused, counted by the emulator and the CRM. */
function callTable(w: World, b: Business) {
  return ROLES.map((role) => ({
    role,
    send: calls(b, 'send', role),
    note: calls(b, 'note', role),
    needHuman: calls(b, 'needHuman', role),
    crm: w.crm.forConversation(b.conv(role)).length,
  }));
}

/** What every action once gives, per conversation (see the comments for what each row proves). */
const ONCE = [
  // Greeted by the previous release; its next message is not greeted again (the once-mark).
  { role: 'greet', send: 1, note: 0, needHuman: 0, crm: 0 },
  // Tagged by the previous release; the tag steers its queued complaint to the VIP rule.
  { role: 'vip', send: 0, note: 2, needHuman: 0, crm: 1 },
  // Escalated by the previous release; its redelivered webhook acts nothing.
  { role: 'refund', send: 0, note: 1, needHuman: 1, crm: 1 },
  // The previous release's timer fired once, by this checkout.
  { role: 'timer', send: 0, note: 1, needHuman: 0, crm: 0 },
  // Dead-lettered by the previous release, replayed once by this checkout.
  { role: 'ghost', send: 0, note: 1, needHuman: 1, crm: 1 },
  // Queued behind the previous release's receiver, served once; redelivered, acts nothing.
  { role: 'fresh', send: 1, note: 0, needHuman: 0, crm: 0 },
  { role: 'plain', send: 0, note: 1, needHuman: 1, crm: 1 },
];

/**
 * waitFor, whose timeout also shows every business's calls so far: a step that never comes (a
 * timer that does not fire) is then seen beside what else went wrong.
 */
async function waitShowingCalls(
  w: World,
  businesses: readonly Business[],
  probe: () => boolean,
  what: string,
): Promise<void> {
  await waitFor(probe, { timeoutMs: 15_000, what }).catch((error: unknown) => {
    const tables = businesses.map((b) => `${b.id ?? '(no businesses:)'}: ${JSON.stringify(callTable(w, b))}`);
    throw new Error(
      `${error instanceof Error ? error.message : String(error)}\ncalls so far (expected in the end: ${JSON.stringify(ONCE)}):\n${tables.join('\n')}`,
      {
        cause: error,
      },
    );
  });
}

/** Every action once: the calls each conversation caused, counted by the emulator and the CRM. */
function expectEveryActionOnce(w: World, b: Business) {
  expect(callTable(w, b)).toEqual(ONCE);
  expect(b.driver.notes(b.conv('vip'))).toEqual(['VIP noted', 'VIP complaint']);
  expect(b.driver.notes(b.conv('plain'))).toEqual(['Complaint: kecewa']);
  expect(b.driver.notes(b.conv('timer'))).toEqual(['An hour without an answer']);
  expect(b.driver.apiMessages(b.conv('greet'))).toHaveLength(1);
  // The only calls the platform refused were the dead letter's, each once, before the replay.
  const refused = b.driver.admin.requests().filter((r) => r.httpStatus !== 200 || r.rc !== null);
  expect(refused.map((r) => r.endpoint).sort()).toEqual(['needHuman', 'note']);
  expect(refused.every((r) => JSON.stringify(r).includes(b.conv('ghost')))).toBe(true);
}

describe('upgrade from the previous release', () => {
  let release: PreviousRelease;
  let redis: RedisServerHandle;
  let world: World | undefined;

  beforeAll(async () => {
    // The first run on a machine builds the previous release (a minute or two); later runs reuse it.
    [release, redis] = await Promise.all([previousRelease(), startRedisServer()]);
  }, 900_000);
  afterEach(async () => {
    await world?.close();
    world = undefined;
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('serves the data of a one-business bridge (no businesses:) with every action once', async () => {
    world = await createWorld({ config: ONE_BUSINESS, processes: [], redisUrl: redis.url });
    const w = world;
    const only: Business = {
      id: null,
      driver: w.business(E2E.businessId),
      path: E2E.path,
      webhookSecret: E2E.webhookSecret,
      conv: (role) => `one-${role}`,
    };
    await upgrade(w, release, [only]);
    expectEveryActionOnce(w, only);
  }, 120_000);

  it('serves the data of a two-business bridge (businesses:) with every action once, each on its own account', async () => {
    const [first, second] = TWO.map(accountOf);
    if (!first || !second) throw new Error('two businesses');
    world = await createWorld({
      config: TWO_BUSINESSES,
      processes: [],
      redisUrl: redis.url,
      emulator: {
        businessId: first.businessId,
        secret: first.secret,
        businesses: [{ businessId: second.businessId, secret: second.secret }],
      },
    });
    const w = world;
    const businesses: Business[] = TWO.map((id) => {
      const account = accountOf(id);
      const driver = w.business(account.businessId);
      // Each business's webhooks go to its own path with its own secret.
      driver.admin.setWebhook({
        url: `http://127.0.0.1:${w.env.PORT}${account.path}`,
        secret: account.webhookSecret,
      });
      return {
        id,
        driver,
        path: account.path,
        webhookSecret: account.webhookSecret,
        conv: (r) => `${id}-${r}`,
      };
    });
    await upgrade(w, release, businesses);
    for (const b of businesses) {
      expectEveryActionOnce(w, b);
      // Its own credentials on every call.
      expect(b.driver.admin.requests().every((r) => r.authenticated)).toBe(true);
    }
  }, 120_000);
});
