import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueLink } from '../../../src/api/console-link.js';
import { revokeLink } from '../../../src/api/link-revocations.js';
import { API_ROUTES } from '../../../src/api/operator-api.js';
import { waitFor } from '../../../src/base/wait-for.js';
import { type RunningBridge, runBridge } from '../../../src/bridge/run-bridge.js';
import { type EmulatorHandle, startEmulator } from '../../../src/emulator/start-emulator.js';
import { createKeyLayout } from '../../../src/queue/key-layout.js';
import { writeTempConfig } from '../../support/bridge-harness.js';
import { connectTestRedis, deleteKeys, testRedisUrl, uniqueName } from '../../support/redis.js';

const PASSWORD = 'correct-horse-battery';
const SECRET = 'a-link-secret-of-at-least-32-characters!';
const CONFIG = `
platform:
  base_url: \${PLATFORM_BASE_URL}
  form: current
receiver:
  port: 0
redis:
  url: \${REDIS_URL}
  prefix: \${REDIS_PREFIX}
worker:
  backoff: { base: 200ms, max: 1s }
admin:
  password: ${PASSWORD}
  link_secret: "${SECRET}"
rules:
  - name: escalate
    on: message_in
    if: { text: { any_keywords: [ refund ] } }
    then:
      - note: "Escalated: {{match.keyword}}"
      - need_human: true
businesses:
  - id: toko-a
    platform: { auth: { business_id: biz-a, secret: sk-a } }
    receiver: { path: /webhooks/toko-a, secrets: [ wh-a ] }
  - id: toko-b
    platform: { auth: { business_id: biz-b, secret: sk-b } }
    receiver: { path: /webhooks/toko-b, secrets: [ wh-b ] }
`;

// biome-ignore lint/suspicious/noExplicitAny: answers are read loosely; openapi.json states their shape
type Json = any;
const read = async (res: Response): Promise<Json> => res.json();

const basic = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`;
const bearer = (token: string) => `Bearer ${token}`;

/**
 * The operator API on a real bridge of two businesses that share a conversation id, on real Redis
 * and a platform emulator: who may see and do what, a dead letter's preview that calls nothing and
 * its retry that runs once, links that expire and are revoked, and openapi.json.
 */
describe('operator API (two businesses, one conversation id)', () => {
  let emulator: EmulatorHandle;
  let bridge: RunningBridge;
  let cleanup: () => Promise<void>;
  let base = '';
  const prefix = uniqueName('api');
  const redis = connectTestRedis();
  const api = (path: string, auth: string | null, init: { method?: string; body?: unknown } = {}) =>
    fetch(`${base}/api/v1${path}`, {
      method: init.method ?? 'GET',
      headers: {
        ...(auth ? { authorization: auth } : {}),
        ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    });

  beforeAll(async () => {
    emulator = await startEmulator({
      businessId: 'biz-a',
      secret: 'sk-a',
      form: 'current',
      businesses: [{ businessId: 'biz-b', secret: 'sk-b' }],
    });
    const file = await writeTempConfig(CONFIG);
    const sink = new Writable({ write: (_c, _e, done) => done() });
    bridge = await runBridge({
      mode: 'start',
      configPath: file.path,
      logger: pino({ level: 'silent' }, sink),
      env: { PLATFORM_BASE_URL: emulator.url, REDIS_URL: testRedisUrl(), REDIS_PREFIX: prefix },
    });
    base = bridge.url ?? '';
    cleanup = async () => {
      await bridge.stop('test over');
      await emulator.close();
      await deleteKeys(redis, prefix);
      await file.cleanup();
    };
    // The same conversation id in both businesses: known to b's platform, not (yet) to a's.
    emulator.admin
      .business('biz-b')
      .createConversation({ id: 'c-1', label: 'Budi', channel: { type: 'telegram' } as never });
    const body = JSON.parse(
      await readFile(join('test', 'fixtures', 'webhooks', 'channel-message-in.json'), 'utf8'),
    );
    body.conversation_id = 'c-1';
    body.message.id = 'msg-refund-1';
    body.message.content.text = 'Saya mau refund';
    for (const [path, secret] of [
      ['/webhooks/toko-a', 'wh-a'],
      ['/webhooks/toko-b', 'wh-b'],
    ] as const) {
      const res = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: secret },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(200);
    }
    const keysA = createKeyLayout({ prefix, shards: 1, tagged: false }).forNaming({
      tag: 'toko-a',
      keyScope: ':b:toko-a',
      eventKeyPrefix: 'toko-a:',
    }).global;
    await waitFor(async () => (await redis.zcard(keysA.deadIndex)) === 1, {
      timeoutMs: 15_000,
      what: "toko-a's dead letter",
    });
    await waitFor(() => emulator.admin.business('biz-b').conversation('c-1').notes.length === 1, {
      timeoutMs: 15_000,
      what: "toko-b's note",
    });
  }, 60_000);

  afterAll(async () => {
    await cleanup?.();
    await redis.quit();
  });

  it('asks for credentials, refuses a bad token, and shows a link its own business only', async () => {
    const none = await api('/businesses', null);
    expect(none.status).toBe(401);
    expect((await read(none)).error).toMatchObject({ code: 'UNAUTHENTICATED' });
    const bad = await api('/businesses', bearer('cbl1.e30.forged'));
    expect(bad.status).toBe(401);
    expect((await read(bad)).error).toMatchObject({ code: 'BAD_CREDENTIALS' });

    const admin = await read(await api('/businesses', basic));
    expect(admin.businesses.map((b: { id: string }) => b.id)).toEqual(['toko-a', 'toko-b']);
    const bViewer = issueLink(SECRET, { business: 'toko-b', role: 'viewer', forMs: 3_600_000 }).token;
    const seen = await read(await api('/businesses', bearer(bViewer)));
    expect(seen.businesses).toEqual([{ id: 'toko-b', state: 'ok', why: null }]);

    // Another business's link: the very answer of a business that does not exist.
    const other = await api('/businesses/toko-a/dead-letters', bearer(bViewer));
    const missing = await api('/businesses/no-such/dead-letters', basic);
    expect(other.status).toBe(404);
    expect(missing.status).toBe(404);
    expect((await read(other)).error.message).toBe(
      (await read(missing)).error.message.replace('no-such', 'toko-a'),
    );
  });

  it("previews a dead letter's retry calling nothing, refuses a viewer's retry, then retries it exactly once", async () => {
    const viewer = issueLink(SECRET, { business: 'toko-a', role: 'viewer', forMs: 3_600_000 }).token;
    const operator = issueLink(SECRET, { business: 'toko-a', role: 'operator', forMs: 3_600_000 }).token;
    const listed = await read(await api('/businesses/toko-a/dead-letters?rule=escalate', bearer(viewer)));
    expect(listed.count).toBe(1);
    const requestsBefore = emulator.admin.requests().length;
    const previewRes = await api('/businesses/toko-a/dead-letters/retry', bearer(viewer), {
      method: 'POST',
      body: { filter: { rule: 'escalate' }, preview: true },
    });
    expect(previewRes.status).toBe(200);
    const preview = await read(previewRes);
    expect(preview.count).toBe(1);
    const [letter] = preview.deadLetters;
    expect(letter.basis).toBe('original plan');
    expect(letter.wouldRun.map((a: { id: string }) => a.id)).toContain('escalate#0');
    expect(letter.differs).toBe(false);
    // The preview called nothing.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(emulator.admin.requests().length).toBe(requestsBefore);

    const byViewer = await api('/businesses/toko-a/dead-letters/retry', bearer(viewer), {
      method: 'POST',
      body: { filter: { rule: 'escalate' }, preview: false, fingerprint: preview.fingerprint },
    });
    expect(byViewer.status).toBe(403);

    emulator.admin.createConversation({ id: 'c-1', label: 'Budi', channel: { type: 'telegram' } as never });
    const retry = { filter: { rule: 'escalate' }, preview: false, fingerprint: preview.fingerprint };
    const done = await api('/businesses/toko-a/dead-letters/retry', bearer(operator), {
      method: 'POST',
      body: retry,
    });
    expect(done.status).toBe(200);
    expect((await read(done)).done).toHaveLength(1);
    // The same request again: the preview was used up, nothing is re-queued twice.
    const again = await api('/businesses/toko-a/dead-letters/retry', bearer(operator), {
      method: 'POST',
      body: retry,
    });
    expect(again.status).toBe(409);
    await waitFor(() => emulator.admin.conversation('c-1').notes.length >= 1, {
      timeoutMs: 15_000,
      what: 'the note',
    });
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(emulator.admin.conversation('c-1').notes).toHaveLength(1);
    expect(emulator.admin.business('biz-b').conversation('c-1').notes).toHaveLength(1);

    const audit = await read(await api('/audit', basic));
    expect(audit.entries[0]).toMatchObject({
      action: 'dead-letters.retry',
      business: 'toko-a',
      who: { kind: 'link' },
    });
    expect(JSON.stringify(audit)).not.toContain(operator);
  }, 60_000);

  it('refuses a link once expired or revoked', async () => {
    const short = issueLink(SECRET, { business: 'toko-a', role: 'viewer', forMs: 1_000 });
    expect((await api('/businesses', bearer(short.token))).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    expect((await api('/businesses', bearer(short.token))).status).toBe(401);

    const revoked = issueLink(SECRET, { business: 'toko-a', role: 'viewer', forMs: 3_600_000 });
    expect((await api('/businesses', bearer(revoked.token))).status).toBe(200);
    await revokeLink(redis, createKeyLayout({ prefix, shards: 1, tagged: false }).global, revoked.grant.id);
    expect((await api('/businesses', bearer(revoked.token))).status).toBe(401);
    // Signed with another secret (a rotated one): refused.
    const rotated = issueLink(`${SECRET}-rotated`, { business: 'toko-a', role: 'viewer', forMs: 3_600_000 });
    expect((await api('/businesses', bearer(rotated.token))).status).toBe(401);
  }, 30_000);

  it('serves an OpenAPI 3.1 document listing every route with its schemas', async () => {
    const doc = await read(await api('/openapi.json', basic));
    expect(doc.openapi).toBe('3.1.0');
    for (const route of API_ROUTES) {
      const operation = doc.paths[route.path]?.[route.method];
      expect(operation, `${route.method} ${route.path}`).toBeDefined();
      expect(operation.responses['200'].content['application/json'].schema).toBeTypeOf('object');
      if (route.body) expect(operation.requestBody.content['application/json'].schema.type).toBeDefined();
      for (const name of Object.keys(route.params?.shape ?? {})) {
        expect(
          operation.parameters.some((p: { name: string; in: string }) => p.name === name && p.in === 'path'),
        ).toBe(true);
      }
    }
  });
});
