import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { exampleConfig, writeTempConfig } from '../../support/bridge-harness.js';
import { createWorld, E2E, type World } from '../../support/e2e-world.js';

/**
 * Issue 12: the bridge is safe by default. The example config without its `channels:` block keeps
 * the 24-hour promise; `form: earlier` with only a secret works; a config without
 * `receiver.secrets` takes the webhooks the platform signs with its Secret Key.
 */
const CHANNELS_BLOCK = /^channels:.*\n(?: {2}- .*\n)+/m;

async function exampleWithoutChannels(hours: 'open' | 'closed'): Promise<string> {
  const text = await exampleConfig({ hours });
  expect(text).toMatch(CHANNELS_BLOCK);
  const without = text.replace(CHANNELS_BLOCK, '');
  expect(without).not.toContain('channels:');
  expect(without).not.toContain('ch_waba_1');
  return without;
}

function validate(configText: string, env: Record<string, string>) {
  return writeTempConfig(configText).then(async (file) => {
    try {
      const result = spawnSync(process.execPath, [join('dist', 'cli.js'), 'validate', file.path], {
        env: { ...process.env, ...env },
        encoding: 'utf8',
      });
      return { status: result.status, stdout: result.stdout, stderr: result.stderr };
    } finally {
      await file.cleanup();
    }
  });
}

describe('safe defaults end to end', () => {
  let world: World | undefined;
  afterEach(async () => {
    await world?.close();
    world = undefined;
  });

  it('without channels: a reply 25 h late on Instagram, WhatsApp API and Messenger is held, when_closed runs; WhatsApp QR is answered', async () => {
    world = await createWorld({ config: await exampleWithoutChannels('closed') });
    const w = world;
    // Channel ids the example config never mentions: only the engine can tell the kind.
    w.conversation('d-ig', { type: 'instagram', id: 'ch_ig_9' }, 'Sari');
    w.conversation('d-waba', { type: 'whatsapp_api', id: 'ch_waba_9' }, 'Andi');
    w.conversation('d-fb', { type: 'facebook', id: 'ch_fb_9' }, 'Rudi');
    w.conversation('d-qr', { type: 'whatsapp_qr', id: 'ch_wa_9' }, 'Budi');
    // The customers' last messages are 25 hours old when they reach the bridge; business hours are
    // closed, so the after-hours reply is due everywhere.
    for (const id of ['d-ig', 'd-waba', 'd-fb', 'd-qr']) w.say(id, 'Halo, masih buka?', '25h');
    const held = ['d-ig', 'd-waba', 'd-fb'];
    await waitFor(
      () =>
        held.every((id) => w.notes(id).length === 1 && w.detail(id).needHuman) &&
        w.apiMessages('d-qr').length === 1,
      { timeoutMs: 15_000, what: 'when_closed on the windowed channels and the QR reply' },
    );
    for (const id of held) {
      expect(w.notes(id)[0]).toMatch(
        /^Reply not sent: the 24-hour window is closed \(1h( \d+m)?\)\. Use a template\.$/,
      );
      expect(w.requests('send', id)).toEqual([]);
      expect(w.apiMessages(id)).toEqual([]);
    }
    expect(w.apiMessages('d-qr')[0]).toMatchObject({
      text: 'Terima kasih Budi! Tim kami kembali pada jam kerja.',
      deliveryStatus: 'delivered',
    });
    expect(w.notes('d-qr')).toEqual([]);

    // The QR channel's kind is only assumed from its engine: the bridge says so once per channel,
    // with the YAML line that states the other reading, also after a second event (a complaint,
    // whose note shows that the second event has been evaluated).
    w.say('d-qr', 'Saya kecewa');
    await waitFor(() => w.notes('d-qr').length === 1, { timeoutMs: 10_000, what: 'the second event' });
    const bridge = w.bridges[0];
    if (!bridge) throw new Error('no bridge process');
    const messages = bridge.jsonLogs().map((line) => String(line.msg ?? ''));
    const advice = messages.filter((msg) => msg.includes('has no channels: entry'));
    expect(advice).toHaveLength(1);
    expect(advice[0]).toContain('channel "ch_wa_9" (engine "wa")');
    expect(advice[0]).toContain('- { match: { engine: wa, channel_id: "ch_wa_9" }, kind: whatsapp_api }');
    // Start-up listed the defaults the config relies on.
    expect(
      messages.some((msg) =>
        msg.startsWith('config default: channels: WhatsApp channels of engine "whatsapp" are unmapped'),
      ),
    ).toBe(true);
  });

  it('form: earlier with only a secret validates and works against the earlier-form emulator', async () => {
    const config = (await exampleConfig({ hours: 'open' }))
      .replace('form: current', 'form: earlier')
      .replace(
        'auth: { scheme: headers, business_id: ${BUSINESS_ID}, secret: ${SECRET_KEY} }',
        'auth: { secret: ${SECRET_KEY} }',
      );
    expect(config).toContain('auth: { secret: ${SECRET_KEY} }');
    const checked = await validate(config, {
      PLATFORM_BASE_URL: 'http://127.0.0.1:1',
      SECRET_KEY: 'x',
      WEBHOOK_SECRET: 'y',
      REDIS_PREFIX: 'cb',
    });
    expect(checked.stderr).toBe('');
    expect(checked.status).toBe(0);
    expect(checked.stdout).toContain('platform: earlier form, http://127.0.0.1:1, auth bearer-secret');
    expect(checked.stdout).toContain(
      "default: platform.auth.scheme not set: bearer-secret (Authorization: Bearer <secret>), the earlier form's scheme",
    );

    world = await createWorld({ config, form: 'earlier' });
    const w = world;
    w.conversation('e-1', { type: 'telegram', id: 'ch_tg' });
    w.say('e-1', 'Saya kecewa sekali');
    await waitFor(() => w.crm.forConversation('e-1').length === 1 && w.detail('e-1').needHuman, {
      timeoutMs: 10_000,
      what: 'the escalation (note, need-human, forward)',
    });
    expect(w.notes('e-1')).toEqual(["Escalated by escalate-complaints: customer wrote 'kecewa'"]);
    const calls = w.admin.requests().filter((r) => r.endpoint !== null);
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.every((r) => r.auth === 'plain-bearer' && r.rc === null)).toBe(true);
  });

  it('without receiver.secrets the receiver takes webhooks carrying the Secret Key, and only those', async () => {
    const config = (await exampleConfig({ hours: 'open' })).replace(/^ {2}secrets: .*\n/m, '');
    expect(config).not.toContain('secrets:');
    // The emulator is given no webhook secret: it signs with the Secret Key, as the interface says.
    world = await createWorld({ config, webhookSecret: null });
    const w = world;
    w.conversation('s-1', { type: 'telegram', id: 'ch_tg' });
    w.say('s-1', 'Saya kecewa sekali');
    await waitFor(() => w.notes('s-1').length === 1, { timeoutMs: 10_000, what: 'the escalation note' });
    const [delivery] = w.admin.deliveries();
    expect(delivery?.state).toBe('delivered');
    expect(delivery?.attempts).toHaveLength(1);

    const receiverUrl = `http://127.0.0.1:${w.env.PORT}${E2E.path}`;
    const post = (authorization: string) =>
      fetch(receiverUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization },
        body: JSON.stringify({ event: 'test', timestamp: 1_738_056_000 }),
      });
    expect((await post(E2E.secret)).status).toBe(200);
    expect((await post(`Bearer ${E2E.secret}`)).status).toBe(200);
    expect((await post(E2E.webhookSecret)).status).toBe(401);
  });
});
