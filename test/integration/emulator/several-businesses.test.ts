import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import type { EmulatorHandle } from '../../../src/emulator/start-emulator.js';
import {
  AUTH_TEXT,
  authHeaders,
  BUSINESS_ID,
  type Credentials,
  call,
  platform,
  type Receiver,
  SECRET,
  startReceiver,
  startTestEmulator,
} from './emulator-test-kit.js';

/**
 * One emulator, several businesses (issue 26, item 5): each its own credentials, conversations,
 * webhooks, faults and logs, over real HTTP. The first business is the test kit's (biz-1).
 */
const A: Credentials = { businessId: BUSINESS_ID, secret: SECRET };
const B: Credentials = { businessId: 'toko-b', secret: 'sk-toko-b' };
const C: Credentials = { businessId: 'toko-c', secret: 'sk-toko-c' };
const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
const NOTE = { conversation_id: 'conv-1', note: 'auth check' };

function startTwo(form: 'current' | 'earlier', more: Parameters<typeof startTestEmulator>[0] = {}) {
  return startTestEmulator({
    form,
    rateLimit: false,
    businesses: [{ businessId: B.businessId, secret: B.secret, businessName: 'Toko B' }],
    ...more,
  });
}

const notes = (emulator: EmulatorHandle, business: string) =>
  emulator.admin.business(business).conversation('conv-1').notes.length;

describe('several businesses: conversations with the same id are apart', () => {
  let emulator: EmulatorHandle;
  beforeAll(async () => {
    emulator = await startTwo('current');
    for (const id of [A.businessId, B.businessId]) {
      emulator.admin
        .business(id)
        .createConversation({ id: 'conv-1', label: `Budi of ${id}`, channel: { type: 'telegram' } });
    }
  });
  afterAll(() => emulator.close());

  it('keeps messages, statuses, counts and logs of conv-1 per business', async () => {
    const a = emulator.admin;
    const b = emulator.admin.business(B.businessId);
    a.customerMessage('conv-1', { text: 'halo dari A' });
    b.customerMessage('conv-1', { text: 'halo dari B' });
    b.customerMessage('conv-1', { text: 'masih B' });

    expect((await platform(emulator, A).send({ conversation_id: 'conv-1', text: 'balasan A' })).json).toEqual(
      {
        conversation_id: 'conv-1',
        success: true,
      },
    );
    await platform(emulator, B).needHuman({ conversation_id: 'conv-1' });

    expect(a.conversation('conv-1').messages.map((m) => m.text)).toEqual(['halo dari A', 'balasan A']);
    expect(b.conversation('conv-1').messages.map((m) => m.text)).toEqual(['halo dari B', 'masih B']);
    expect(a.conversation('conv-1')).toMatchObject({
      label: `Budi of ${A.businessId}`,
      status: 'Ditangani',
      needHuman: false,
    });
    expect(b.conversation('conv-1')).toMatchObject({
      label: 'Budi of toko-b',
      status: 'Butuh CS',
      needHuman: true,
    });

    const historyA = await platform(emulator, A).history('conv-1', '?limit=0');
    const historyB = await platform(emulator, B).history('conv-1', '?limit=0');
    expect(historyA.json.data.list.map((m: { message: string }) => m.message)).toEqual([
      'halo dari A',
      'balasan A',
    ]);
    expect(historyB.json.data.list.map((m: { message: string }) => m.message)).toEqual([
      'halo dari B',
      'masih B',
    ]);
    expect((await platform(emulator, A).total()).json.data.total).toBe(0);
    expect((await platform(emulator, B).total()).json.data.total).toBe(1);

    // Each business's request log holds its own calls only.
    expect(a.requests().map((r) => r.endpoint)).toEqual(['send', 'history', 'needHumanTotal']);
    expect(b.requests().map((r) => r.endpoint)).toEqual(['needHuman', 'history', 'needHumanTotal']);
    expect(a.summary()).toMatchObject({
      business: { id: A.businessId, name: 'Toko Emulator' },
      conversations: 1,
    });
    expect(b.summary()).toMatchObject({ business: { id: 'toko-b', name: 'Toko B' }, conversations: 1 });
  });

  it('answers a conversation only one business has as unknown to the other', async () => {
    emulator.admin.business(B.businessId).createConversation({ id: 'only-b' });
    const fromA = await platform(emulator, A).send({ conversation_id: 'only-b', text: 'x' });
    expect(fromA.json).toEqual({ status: 0, rc: 404, error_msg: 'conversation not found' });
    expect((await platform(emulator, A).history('only-b')).json.data).toEqual({ list: null, last_id: 0 });
    expect((await platform(emulator, B).send({ conversation_id: 'only-b', text: 'x' })).json.success).toBe(
      true,
    );
    expect(() => emulator.admin.conversation('only-b')).toThrow('conversation "only-b" does not exist');
  });

  it('API sends are signed with the sending business name', () => {
    const sent = emulator.admin.conversation('conv-1').messages.find((m) => m.origin === 'api');
    expect(sent?.senderName).toBe('Toko Emulator');
  });
});

describe('several businesses: one business credentials never open another', () => {
  let current: EmulatorHandle;
  let earlier: EmulatorHandle;
  beforeAll(async () => {
    current = await startTwo('current');
    earlier = await startTwo('earlier');
    for (const emulator of [current, earlier]) {
      for (const id of [A.businessId, B.businessId])
        emulator.admin.business(id).createConversation({ id: 'conv-1' });
    }
  });
  afterAll(async () => {
    await current.close();
    await earlier.close();
  });

  it.each([
    ['Business + Secret', { Business: B.businessId, Secret: B.secret }, 'business-headers'],
    ['encoded bearer', { Authorization: `Bearer ${b64(`${B.businessId}:${B.secret}`)}` }, 'encoded-bearer'],
  ])('current form: %s of toko-b acts on toko-b only', async (_case, headers, scheme) => {
    const before = [notes(current, A.businessId), notes(current, B.businessId)];
    const result = await call(current.url, 'POST', '/v1/note', { headers, body: NOTE });
    expect(result.json).toEqual({ message_id: expect.any(String), success: true });
    expect([notes(current, A.businessId), notes(current, B.businessId)]).toEqual([
      before[0],
      (before[1] ?? 0) + 1,
    ]);
    expect(current.admin.business(B.businessId).requests(1)[0]).toMatchObject({
      auth: scheme,
      authenticated: true,
    });
  });

  it.each([
    ['A id + B secret', { Business: A.businessId, Secret: B.secret }, A, 'wrong Secret'],
    ['B id + A secret', { Business: B.businessId, Secret: A.secret }, B, 'wrong Secret'],
    [
      'encoded bearer of A id + B secret',
      { Authorization: `Bearer ${b64(`${A.businessId}:${B.secret}`)}` },
      A,
      'wrong secret in bearer',
    ],
    [
      'encoded bearer of B id + A secret',
      { Authorization: `Bearer ${b64(`${B.businessId}:${A.secret}`)}` },
      B,
      'wrong secret in bearer',
    ],
    [
      'valid A headers beside an encoded bearer of B',
      {
        Business: A.businessId,
        Secret: A.secret,
        Authorization: `Bearer ${b64(`${B.businessId}:${B.secret}`)}`,
      },
      A,
      'unknown business id in bearer (beside Business and Secret)',
    ],
    [
      'valid B headers beside an encoded bearer of B id + A secret',
      {
        Business: B.businessId,
        Secret: B.secret,
        Authorization: `Bearer ${b64(`${B.businessId}:${A.secret}`)}`,
      },
      B,
      'wrong secret in bearer (beside Business and Secret)',
    ],
    [
      'the earlier form bearer of B',
      { Authorization: `Bearer ${B.secret}` },
      A,
      'bearer is not base64 of business_id:secret',
    ],
  ] as const)(
    'current form: %s is refused like a wrong secret (HTTP 200, rc 401), nothing changes',
    async (_case, headers, loggedBy, reason) => {
      const before = [notes(current, A.businessId), notes(current, B.businessId)];
      const result = await call(current.url, 'POST', '/v1/note', { headers, body: NOTE });
      expect(result.status).toBe(200);
      expect(result.json).toEqual({ status: 0, rc: 401, error_msg: AUTH_TEXT });
      expect([notes(current, A.businessId), notes(current, B.businessId)]).toEqual(before);
      expect(current.admin.business(loggedBy.businessId).requests(1)[0]).toMatchObject({
        authenticated: false,
        auth: reason,
      });
    },
  );

  it('earlier form: the plain bearer of toko-b acts on toko-b only', async () => {
    const before = [notes(earlier, A.businessId), notes(earlier, B.businessId)];
    const result = await call(earlier.url, 'POST', '/v1/note', {
      headers: authHeaders('earlier', B),
      body: NOTE,
    });
    expect(result.json).toEqual({ status: 1, message: 'Sukses' });
    expect([notes(earlier, A.businessId), notes(earlier, B.businessId)]).toEqual([
      before[0],
      (before[1] ?? 0) + 1,
    ]);
  });

  it.each([
    ['merchant_id + secret_key of toko-b', { merchant_id: B.businessId, secret_key: B.secret }, 200],
    ['merchant_id of A + secret_key of B', { merchant_id: A.businessId, secret_key: B.secret }, 401],
    ['merchant_id of B + secret_key of A', { merchant_id: B.businessId, secret_key: A.secret }, 401],
    [
      'merchant_id of A + the bearer of B',
      { merchant_id: A.businessId, Authorization: `Bearer ${B.secret}` },
      401,
    ],
    [
      'merchant_id + secret_key of A + the bearer of B',
      { merchant_id: A.businessId, secret_key: A.secret, Authorization: `Bearer ${B.secret}` },
      401,
    ],
    ['secret_key of A + the bearer of B', { secret_key: A.secret, Authorization: `Bearer ${B.secret}` }, 401],
    ['the bearer of B', { Authorization: `Bearer ${B.secret}` }, 200],
  ])('earlier form history: %s (%j) answers HTTP %i', async (_case, headers, status) => {
    earlier.admin.business(B.businessId).customerMessage('conv-1', { text: 'pesan B' });
    const result = await call(earlier.url, 'GET', '/v1/message/conv-1', { headers });
    expect(result.status).toBe(status);
    if (status === 401) expect(result.json).toEqual({ status: 0, rc: 401, error_msg: AUTH_TEXT });
    // The history a business gets is its own: toko-b's conv-1, never the first business's (empty) one.
    else {
      const own = earlier.admin.business(B.businessId).conversation('conv-1').messages;
      expect(result.json.data.map((m: { message: string }) => m.message)).toEqual(own.map((m) => m.text));
      expect(own.map((m) => m.text)).toContain('pesan B');
    }
  });

  it.each([
    ['the bearer of nobody', { Authorization: 'Bearer sk-nobody' }],
    ['the current form headers of B', { Business: B.businessId, Secret: B.secret }],
    ['merchant headers of B outside the history call', { merchant_id: B.businessId, secret_key: B.secret }],
  ])('earlier form: %s gets HTTP 401 and changes nothing', async (_case, headers) => {
    const before = [notes(earlier, A.businessId), notes(earlier, B.businessId)];
    const result = await call(earlier.url, 'POST', '/v1/note', { headers, body: NOTE });
    expect(result.status).toBe(401);
    expect(result.json).toEqual({ status: 0, rc: 401, error_msg: AUTH_TEXT });
    expect([notes(earlier, A.businessId), notes(earlier, B.businessId)]).toEqual(before);
  });
});

describe('several businesses: each business webhooks go to its own URL with its own secret', () => {
  const receivers: Receiver[] = [];
  let emulator: EmulatorHandle | undefined;
  afterEach(async () => {
    await emulator?.close();
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });

  it('sends every event of a business to that business only, signed with its secret', async () => {
    const [toA, toB, toC, handoverB] = await Promise.all([
      startReceiver(),
      startReceiver(),
      startReceiver(),
      startReceiver(),
    ]);
    receivers.push(toA as Receiver, toB as Receiver, toC as Receiver, handoverB as Receiver);
    if (!toA || !toB || !toC || !handoverB) throw new Error('receivers did not start');
    emulator = await startTestEmulator({
      webhook: { url: toA.url },
      businesses: [
        // Its webhooks carry its Secret Key (interface, "Authentication" rule 3) ...
        {
          businessId: B.businessId,
          secret: B.secret,
          webhook: { url: toB.url },
          handoverWebhook: { url: handoverB.url },
        },
        // ... or a webhook secret of its own.
        {
          businessId: C.businessId,
          secret: C.secret,
          businessName: 'Toko C',
          webhook: { url: toC.url, secret: 'wh-c' },
        },
      ],
    });
    for (const id of [A.businessId, B.businessId, C.businessId]) {
      const admin = emulator.admin.business(id);
      admin.createConversation({ id: 'conv-1', label: 'Budi' });
      admin.customerMessage('conv-1', { text: `halo ${id}` });
    }
    emulator.admin.business(B.businessId).handOver('conv-1');
    await emulator.businesses.deliveriesSettled();

    const seen = (receiver: Receiver) =>
      receiver.calls.map((c) => [
        c.headers.authorization,
        c.body.event,
        c.body.message.bisnis.id,
        c.body.message.content.text,
      ]);
    expect(seen(toA)).toEqual([[SECRET, 'channel.message_in', A.businessId, `halo ${A.businessId}`]]);
    expect(seen(toB)).toEqual([[B.secret, 'channel.message_in', B.businessId, 'halo toko-b']]);
    expect(seen(toC)).toEqual([['wh-c', 'channel.message_in', C.businessId, 'halo toko-c']]);
    expect(toC.calls[0]?.body.message.bisnis).toEqual({ id: 'toko-c', name: 'Toko C' });
    expect(
      handoverB.calls.map((c) => [c.headers.authorization, c.body.event, c.body.message.bisnis.id]),
    ).toEqual([[B.secret, 'conversation.handover', B.businessId]]);
    // Delivery lists are per business too (each numbers its own deliveries).
    for (const id of [A.businessId, B.businessId, C.businessId]) {
      expect(
        emulator.admin
          .business(id)
          .deliveries()
          .map((d) => [d.id, d.state]),
      ).toEqual([['dlv-1', 'delivered']]);
    }
  });

  it('changes one business webhook through the admin API without touching the others', async () => {
    const [toA, toB, other] = await Promise.all([startReceiver(), startReceiver(), startReceiver()]);
    receivers.push(toA as Receiver, toB as Receiver, other as Receiver);
    if (!toA || !toB || !other) throw new Error('receivers did not start');
    emulator = await startTestEmulator({
      webhook: { url: toA.url },
      businesses: [{ businessId: B.businessId, secret: B.secret, webhook: { url: toB.url } }],
    });
    const put = await call(emulator.adminUrl, 'PUT', '/webhook?business=toko-b', {
      body: { url: other.url, secret: 'new-b' },
    });
    expect(put.json).toEqual({ webhook: { url: other.url, secretSet: true } });
    expect(emulator.admin.webhook()).toEqual({ url: toA.url, secretSet: true });
    for (const id of [A.businessId, B.businessId]) {
      emulator.admin.business(id).createConversation({ id: 'conv-1' });
      emulator.admin.business(id).customerMessage('conv-1', { text: id });
    }
    await emulator.businesses.deliveriesSettled();
    expect(toA.calls.map((c) => c.body.message.bisnis.id)).toEqual([A.businessId]);
    expect(toB.calls).toHaveLength(0);
    expect(other.calls.map((c) => [c.headers.authorization, c.body.message.bisnis.id])).toEqual([
      ['new-b', 'toko-b'],
    ]);
  });
});

describe('several businesses: faults for one business or for all', () => {
  let emulator: EmulatorHandle;
  beforeAll(async () => {
    emulator = await startTwo('current');
    for (const id of [A.businessId, B.businessId])
      emulator.admin.business(id).createConversation({ id: 'conv-1' });
  });
  afterEach(async () => {
    await call(emulator.adminUrl, 'DELETE', '/faults?business=*');
    await call(emulator.adminUrl, 'PUT', '/auth-storm?business=*', { body: { active: false } });
  });
  afterAll(() => emulator.close());

  const sendAs = (who: Credentials) => platform(emulator, who).send({ conversation_id: 'conv-1', text: 'x' });

  it('a 5xx for toko-b fails only toko-b calls', async () => {
    const added = await call(emulator.adminUrl, 'POST', '/faults', {
      headers: { 'X-Emulator-Business': 'toko-b' },
      body: { type: 'error', status: 503, delivery: 'http' },
    });
    expect(added.json).toMatchObject({ id: 'fault-1', type: 'error', status: 503 });
    for (let i = 0; i < 3; i += 1) {
      expect((await sendAs(B)).status).toBe(503);
      expect((await sendAs(A)).json).toEqual({ conversation_id: 'conv-1', success: true });
    }
    expect(emulator.admin.faults()).toEqual([]);
    expect(emulator.admin.business(B.businessId).faults()).toMatchObject([{ id: 'fault-1', fired: 3 }]);
    // A request that names toko-b with a wrong secret is toko-b's, faults included.
    const wrong = await call(emulator.url, 'POST', '/v1/message', {
      headers: { Business: B.businessId, Secret: 'nope' },
      body: { conversation_id: 'conv-1', text: 'x' },
    });
    expect(wrong.status).toBe(503);
  });

  it('a 401 storm for toko-b leaves the first business working (in-process switch)', async () => {
    emulator.admin.business(B.businessId).setAuthStorm(true);
    expect((await sendAs(B)).json).toEqual({ status: 0, rc: 401, error_msg: AUTH_TEXT });
    expect((await sendAs(A)).json.success).toBe(true);
    const faults = await call(emulator.adminUrl, 'GET', '/faults?business=toko-b');
    expect(faults.json).toEqual({ faults: [], authStorm: true });
    expect((await call(emulator.adminUrl, 'GET', '/faults')).json).toEqual({ faults: [], authStorm: false });
  });

  it('a 401 storm for the first business leaves toko-b working', async () => {
    await call(emulator.adminUrl, 'PUT', '/auth-storm', { body: { active: true } });
    expect((await sendAs(A)).json.rc).toBe(401);
    expect((await sendAs(B)).json.success).toBe(true);
  });

  it('business=* sets a fault for every business, listed apart and cleared for all', async () => {
    const added = await call(emulator.adminUrl, 'POST', '/faults?business=*', {
      body: { type: 'error', endpoint: 'send', status: 500 },
    });
    expect(added.json).toMatchObject({ id: 'fault-all-1' });
    expect((await sendAs(A)).json).toEqual({ status: 0, rc: 500, error_msg: 'internal server error' });
    expect((await sendAs(B)).json.rc).toBe(500);
    expect(emulator.admin.requests(1)[0]?.faults).toEqual(['fault-all-1']);
    expect((await call(emulator.adminUrl, 'GET', '/faults?business=*')).json.faults).toMatchObject([
      { id: 'fault-all-1', fired: 2 },
    ]);
    await call(emulator.adminUrl, 'DELETE', '/faults?business=*');
    expect((await sendAs(A)).json.success).toBe(true);
    expect((await sendAs(B)).json.success).toBe(true);
  });

  it('business=* turns the auth storm on for every business', async () => {
    const storm = await call(emulator.adminUrl, 'PUT', '/auth-storm?business=*', { body: { active: true } });
    expect(storm.json).toEqual({ authStorm: true });
    expect((await sendAs(A)).json.rc).toBe(401);
    expect((await sendAs(B)).json.rc).toBe(401);
  });
});

describe('several businesses: the admin API selects a business', () => {
  let emulator: EmulatorHandle;
  beforeAll(async () => {
    emulator = await startTwo('current', {
      businesses: [
        { businessId: B.businessId, secret: B.secret, businessName: 'Toko B' },
        { businessId: C.businessId, secret: C.secret, apiFeature: false },
      ],
    });
  });
  afterAll(() => emulator.close());

  it('lists the businesses without their secrets', async () => {
    const listed = await call(emulator.adminUrl, 'GET', '/businesses');
    expect(listed.json).toEqual({
      default: A.businessId,
      businesses: [
        expect.objectContaining({ id: A.businessId, name: 'Toko Emulator', default: true, apiFeature: true }),
        expect.objectContaining({ id: 'toko-b', name: 'Toko B', default: false }),
        expect.objectContaining({
          id: 'toko-c',
          name: 'toko-c',
          apiFeature: false,
          authStorm: false,
          faults: 0,
        }),
      ],
    });
    expect(JSON.stringify(listed.json)).not.toContain('sk-');
  });

  it('creates a conversation in the business named by ?business= or X-Emulator-Business; the first by default', async () => {
    await call(emulator.adminUrl, 'POST', '/conversations?business=toko-b', { body: { id: 'q' } });
    await call(emulator.adminUrl, 'POST', '/conversations', {
      headers: { 'X-Emulator-Business': 'toko-c' },
      body: { id: 'h' },
    });
    await call(emulator.adminUrl, 'POST', '/conversations', { body: { id: 'd' } });
    const ids = async (query: string) =>
      (await call(emulator.adminUrl, 'GET', `/conversations${query}`)).json.conversations.map(
        (c: { id: string }) => c.id,
      );
    expect(await ids('?business=toko-b')).toEqual(['q']);
    expect(await ids('?business=toko-c')).toEqual(['h']);
    expect(await ids('')).toEqual(['d']);
    expect(await ids(`?business=${A.businessId}`)).toEqual(['d']);
    expect((await call(emulator.adminUrl, 'GET', '/state?business=toko-b')).json.business).toEqual({
      id: 'toko-b',
      name: 'Toko B',
    });
  });

  it('plays the customer of one business (and its webhook-less delivery is skipped there)', async () => {
    const sent = await call(emulator.adminUrl, 'POST', '/conversations/q/customer-message?business=toko-b', {
      body: { text: 'halo B' },
    });
    expect(sent.json).toMatchObject({ conversationId: 'q', text: 'halo B' });
    expect(emulator.admin.business('toko-b').deliveries()).toMatchObject([
      { state: 'skipped', conversationId: 'q' },
    ]);
    expect(emulator.admin.deliveries()).toEqual([]);
    const missing = await call(emulator.adminUrl, 'POST', '/conversations/q/customer-message', {
      body: { text: 'x' },
    });
    expect(missing.status).toBe(404);
  });

  it('switches one business plan', async () => {
    await call(emulator.adminUrl, 'PUT', '/plan?business=toko-b', { body: { apiFeature: false } });
    expect(emulator.admin.business('toko-b').apiFeature).toBe(false);
    expect(emulator.admin.apiFeature).toBe(true);
    const refused = await platform(emulator, B).total();
    expect(refused.json).toMatchObject({ status: 0, rc: 403 });
    expect((await platform(emulator, C).total()).json.rc).toBe(403);
    expect((await platform(emulator, A).total()).json.status).toBe(1);
    await call(emulator.adminUrl, 'PUT', '/plan?business=toko-b', { body: { apiFeature: true } });
  });

  it('resets one business, or every business with business=*', async () => {
    await call(emulator.adminUrl, 'POST', '/reset?business=toko-b', { body: { empty: true } });
    expect(emulator.admin.business('toko-b').conversations()).toEqual([]);
    expect(emulator.admin.conversations().map((c) => c.id)).toEqual(['d']);
    const all = await call(emulator.adminUrl, 'POST', '/reset?business=*', { body: { empty: true } });
    expect(all.json.businesses.map((b: { conversations: number }) => b.conversations)).toEqual([0, 0, 0]);
    // Each business's configured plan is back.
    expect(emulator.admin.business('toko-c').apiFeature).toBe(false);
  });

  it.each([
    [
      'an unknown business',
      '/conversations?business=toko-z',
      {},
      404,
      'the emulator hosts no business "toko-z": use one of biz-1, toko-b, toko-c (GET /_emulator/businesses)',
    ],
    [
      'two different businesses',
      '/conversations?business=toko-b',
      { 'X-Emulator-Business': 'toko-c' },
      400,
      'the request names two businesses (?business=toko-b and X-Emulator-Business: toko-c): name one',
    ],
    [
      'every business where one is needed',
      '/conversations?business=*',
      {},
      400,
      'GET /conversations acts on one business: name it with ?business=ID (business=* works for faults, auth-storm, plan, random-seed and reset)',
    ],
  ])('refuses %s', async (_case, path, headers, status, message) => {
    const result = await call(emulator.adminUrl, 'GET', path, { headers });
    expect(result.status).toBe(status);
    expect(result.json.error.message).toBe(message);
  });

  it('reaches another business in-process, and says which ones exist', () => {
    expect(emulator.admin.businessIds()).toEqual([A.businessId, 'toko-b', 'toko-c']);
    expect(emulator.admin.business('toko-c').businessId).toBe('toko-c');
    expect(() => emulator.admin.business('nope')).toThrow('the emulator hosts no business "nope"');
  });
});

describe('several businesses: options', () => {
  it('starts from a businesses list alone, with a seed per business', async () => {
    const emulator = await startTestEmulator({
      businessId: undefined,
      secret: undefined,
      businesses: [
        { businessId: 'x', secret: 'sx', seedData: { conversations: [{ id: 'conv-1', label: 'Seed X' }] } },
        { businessId: 'y', secret: 'sy', seedData: { conversations: [{ id: 'conv-1', label: 'Seed Y' }] } },
      ],
    });
    try {
      expect(emulator.admin.businessId).toBe('x');
      expect(emulator.admin.conversation('conv-1').label).toBe('Seed X');
      expect(emulator.admin.business('y').conversation('conv-1').label).toBe('Seed Y');
      await waitFor(
        async () =>
          (await platform(emulator, { businessId: 'y', secret: 'sy' }).history('conv-1')).json.status === 1,
        {
          timeoutMs: 2000,
          what: 'y to answer',
        },
      );
    } finally {
      await emulator.close();
    }
  });

  it('names the business whose seed is wrong', async () => {
    await expect(
      startTestEmulator({
        businesses: [{ businessId: 'y', secret: 'sy', seedData: { conversations: 'no' } }],
      }),
    ).rejects.toThrow('businesses.0.seedData: conversations: Invalid input: expected array, received string');
  });
});
