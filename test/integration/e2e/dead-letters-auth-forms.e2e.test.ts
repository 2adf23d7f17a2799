import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { runCli } from '../../../src/cli/run-cli.js';
import { exampleConfig } from '../../support/bridge-harness.js';
import { createWorld, E2E, itOffCluster, type World } from '../../support/e2e-world.js';

async function cli(args: string[]) {
  let out = '';
  let err = '';
  const code = await runCli(args, { stdout: (t) => (out += t), stderr: (t) => (err += t) });
  return { code, out, err };
}

describe('dead letters, a 401 storm and the earlier form end to end', () => {
  let world: World | undefined;
  afterEach(async () => {
    await world?.close();
    world = undefined;
  });

  it('an action the platform refuses for good is dead-lettered with its reason, and replays once fixed', async () => {
    world = await createWorld({ config: await exampleConfig({ hours: 'open' }) });
    const w = world;
    // A complaint for a conversation the platform does not know: the note gets `conversation not found`.
    const body = JSON.parse(
      await readFile(join('test', 'fixtures', 'webhooks', 'channel-message-in.json'), 'utf8'),
    );
    body.conversation_id = 'c-ghost';
    body.message.id = 'msg-ghost-1';
    body.message.content.text = 'Saya mau refund';
    const port = w.env.PORT;
    const response = await fetch(`http://127.0.0.1:${port}${E2E.path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: E2E.webhookSecret },
      body: JSON.stringify(body),
    });
    expect(await response.json()).toEqual({ success: true });
    await waitFor(async () => (await w.redis.zcard(w.keys.deadIndex)) === 1, {
      timeoutMs: 10_000,
      what: 'the dead letter',
    });

    const dlq = ['dlq', '--redis-url', w.env.REDIS_URL ?? '', '--prefix', w.prefix];
    const listed = await cli([...dlq, 'list', '--json']);
    expect(listed.code).toBe(0);
    const [entry] = JSON.parse(listed.out);
    expect(entry).toMatchObject({ queue: 'events', code: 'UNRECOVERABLE', conversationId: 'c-ghost' });
    expect(entry.reason).toContain('conversation not found');
    expect(entry.actions).toContainEqual(
      expect.objectContaining({ id: 'escalate-complaints#0', state: 'failed' }),
    );

    const shown = await cli([...dlq, 'show', entry.id]);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.out)).toMatchObject({ id: entry.id, eventKey: 'channel.message_in|msg-ghost-1' });
    expect((await cli([...dlq, 'show', 'no-such-id'])).code).toBe(1);

    // The conversation exists now: replay. The note is added once; the forward that already
    // succeeded before the dead letter is not sent again.
    const forwardsBefore = w.crm.forConversation('c-ghost').length;
    w.conversation('c-ghost', { type: 'whatsapp_qr', id: 'ch_wa_1' });
    const retried = await cli([...dlq, 'retry', entry.id]);
    expect(retried.code).toBe(0);
    expect(retried.out).toContain('requeued');
    await waitFor(
      async () => (await w.redis.zcard(w.keys.order('c-ghost'))) === 0 && w.detail('c-ghost').needHuman,
      {
        timeoutMs: 10_000,
        what: 'the replay to finish',
      },
    );
    expect(w.notes('c-ghost')).toHaveLength(1);
    expect(w.crm.forConversation('c-ghost')).toHaveLength(forwardsBefore);
    expect(await w.redis.zcard(w.keys.deadIndex)).toBe(0);
  });

  it('a 401 storm (credentials rotated) pauses the work and reports it, dead-letters nothing, and recovers', async () => {
    world = await createWorld({
      config: await exampleConfig({ hours: 'open', worker: { auth_failure_pause: '1s' } }),
    });
    const w = world;
    w.admin.setAuthStorm(true);
    const ids = ['a-1', 'a-2', 'a-3', 'a-4', 'a-5'];
    for (const id of ids) {
      w.conversation(id, { type: 'telegram', id: 'ch_tg' });
      w.say(id, 'Tolong refund');
    }
    const [bridge] = w.bridges;
    await waitFor(() => bridge?.logs.some((l) => l.includes('the platform rejects our credentials')), {
      timeoutMs: 10_000,
      what: 'the credentials alarm in the log',
    });
    expect(await w.redis.exists(w.keys.authAlarm)).toBe(1);
    const refused = w.admin.requests().filter((r) => r.httpStatus !== null && !r.authenticated).length;
    expect(refused).toBeGreaterThan(0);
    expect(await w.redis.zcard(w.keys.deadIndex)).toBe(0);
    // Credentials fixed on the platform side: everything goes through, once.
    w.admin.setAuthStorm(false);
    await waitFor(() => ids.every((id) => w.notes(id).length === 1 && w.detail(id).needHuman), {
      timeoutMs: 20_000,
      what: 'every action after the storm',
    });
    for (const id of ids) expect(w.notes(id)).toHaveLength(1);
    expect(await w.redis.zcard(w.keys.deadIndex)).toBe(0);
  });

  itOffCluster()(
    'the earlier interface form: earlier webhook names, bearer-secret auth, media reply with text',
    async () => {
      const config = (await exampleConfig({ hours: 'open' }))
        .replace('form: current', 'form: earlier')
        .replace(
          'auth: { scheme: headers, business_id: ${BUSINESS_ID}, secret: ${SECRET_KEY} }',
          'auth: { scheme: bearer-secret, secret: ${SECRET_KEY} }',
        );
      expect(config).toContain('scheme: bearer-secret');
      world = await createWorld({ config, form: 'earlier' });
      const w = world;
      w.conversation('e-1', { type: 'telegram', id: 'ch_tg' });
      w.say('e-1', 'Saya kecewa sekali');
      w.conversation('e-2', { type: 'webchat', id: 'ch_web' });
      w.say('e-2', 'katalog dong');
      await waitFor(() => w.crm.forConversation('e-1').length === 1 && w.apiMessages('e-2').length === 1, {
        timeoutMs: 10_000,
        what: 'the escalation (note, need-human, forward) and the catalog reply',
      });
      expect(w.admin.deliveries().map((d) => d.event)).toContain('message.incoming');
      expect(w.notes('e-1')).toEqual(["Escalated by escalate-complaints: customer wrote 'kecewa'"]);
      expect(w.detail('e-1').needHuman).toBe(true);
      expect(w.apiMessages('e-2')[0]).toMatchObject({
        type: 'document',
        text: 'https://cdn.example.com/katalog.pdf',
      });
      expect(w.requests('note', 'e-1')[0]?.auth).toMatch(/bearer/i);
    },
  );
});
