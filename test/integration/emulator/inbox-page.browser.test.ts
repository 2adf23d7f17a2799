import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import type { EmulatorHandle } from '../../../src/emulator/start-emulator.js';
import { platform, type Receiver, startReceiver, startTestEmulator } from './emulator-test-kit.js';

const CHROMIUM = '/usr/bin/chromium';

/** Runs in the page (the test's TypeScript has no DOM library, hence the cast). */
const backgroundOf = (element: unknown) =>
  (globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } }).getComputedStyle(
    element,
  ).backgroundColor;

/**
 * Drives the inbox page in a real headless Chromium: what a person sees, and what the buttons do.
 * Screenshots go to /tmp/emulator-inbox-*.png.
 */
describe('inbox page (headless Chromium)', () => {
  let browser: Browser;
  let page: Page;
  let emulator: EmulatorHandle;
  let receiver: Receiver;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `the inbox page test needs Chromium at ${CHROMIUM}: install it with \`apt-get install -y chromium\``,
      );
    }
    receiver = await startReceiver();
    emulator = await startTestEmulator({
      businessName: 'Toko Maju',
      webhook: { url: receiver.url, secret: 'whsec' },
    });
    const { admin } = emulator;
    const api = platform(emulator);

    admin.createConversation({
      id: 'conv-budi',
      label: 'Budi',
      channel: { type: 'whatsapp_qr', name: 'WA Toko' },
    });
    admin.customerMessage('conv-budi', {
      text: 'Halo, pesanan <b>#123</b> belum sampai <script>alert(1)</script>',
    });
    admin.aiReply('conv-budi', 'Baik Kak, kami cek dulu ya.');
    await api.note({ conversation_id: 'conv-budi', note: 'Pelanggan VIP, prioritaskan' });

    admin.createConversation({ id: 'conv-sari', label: 'Sari', channel: { type: 'telegram' } });
    admin.customerMessage('conv-sari', { text: 'Apakah toko buka hari Minggu?' });

    admin.createConversation({ id: 'conv-tono', label: 'Tono', channel: { type: 'instagram' } });
    admin.customerMessage('conv-tono', { text: 'Saya mau komplain' });
    await api.needHuman({ conversation_id: 'conv-tono' });

    admin.createConversation({ id: 'conv-ina', label: 'Ina', channel: { type: 'whatsapp_api' } });
    admin.customerMessage('conv-ina', { text: 'Halo?', at: '25h' });
    await api.send({ conversation_id: 'conv-ina', text: 'Maaf baru sempat membalas' });

    admin.createConversation({ id: 'conv-lia', label: 'Lia', channel: { type: 'webchat' } });
    admin.customerMessage('conv-lia', { text: 'Terima kasih!' });
    admin.done('conv-lia');

    await waitFor(() => admin.deliveries().every((d) => d.finishedAt !== null), {
      timeoutMs: 5000,
      what: 'the seeding webhooks to be delivered',
    });

    browser = await chromium.launch({
      headless: true,
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  });

  afterAll(async () => {
    await browser?.close();
    await emulator?.close();
    await receiver?.close();
  });

  it('shows the seven status tabs with their counts', async () => {
    await page.goto(emulator.inboxUrl);
    expect(await page.title()).toContain('Toko Maju');
    const counts: Record<string, string> = {};
    for (const slug of [
      'belum-dibaca',
      'butuh-cs',
      'belum-ditangani',
      'ditangani',
      'selesai',
      'diblokir',
      'dilewati',
    ]) {
      counts[slug] = (await page.getByTestId(`count-${slug}`).textContent()) ?? '';
    }
    expect(counts).toEqual({
      'belum-dibaca': '1',
      'butuh-cs': '1',
      'belum-ditangani': '0',
      ditangani: '2',
      selesai: '1',
      diblokir: '0',
      dilewati: '0',
    });
    await expect(page.getByTestId('tab-butuh-cs').textContent()).resolves.toBe('Butuh CS1');
    expect(await page.getByTestId('conversation-item').count()).toBe(5);
  });

  it('shows a conversation: messages, the note set apart, times in WIB and delivery status; user text escaped', async () => {
    await page.goto(`${emulator.inboxUrl}?c=conv-budi`);
    const detail = page.getByTestId('conversation-detail');
    await expect(detail.locator('h2').textContent()).resolves.toBe('Budi');
    const messages = page.getByTestId('message');
    expect(await messages.count()).toBe(2);
    const first = (await messages.nth(0).textContent()) ?? '';
    expect(first).toContain('Halo, pesanan <b>#123</b> belum sampai <script>alert(1)</script>');
    expect(first).toMatch(/\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} WIB/);
    expect(await detail.locator('.body b').count()).toBe(0);
    expect(await detail.locator('script').count()).toBe(0);
    const ai = (await messages.nth(1).textContent()) ?? '';
    expect(ai).toContain('Asisten - AI');
    expect(await messages.nth(1).getByTestId('delivery-status').textContent()).toBe('delivered');
    const note = page.getByTestId('note');
    expect(await note.count()).toBe(1);
    expect(await note.textContent()).toContain('Catatan internal');
    expect(await note.textContent()).toContain('Pelanggan VIP, prioritaskan');
    const noteBackground = await note.evaluate(backgroundOf);
    const messageBackground = await messages.nth(0).evaluate(backgroundOf);
    expect(noteBackground).not.toBe(messageBackground);
    await page.screenshot({ path: '/tmp/emulator-inbox-conversation.png', fullPage: true });
  });

  it('shows a failed delivery outside the 24-hour window', async () => {
    await page.goto(`${emulator.inboxUrl}?c=conv-ina`);
    const statuses = await page.getByTestId('delivery-status').allTextContents();
    expect(statuses).toEqual(['delivered', 'failed']);
  });

  it('takes over, sends an agent reply, and the reply goes out as agent.message_out', async () => {
    await page.goto(`${emulator.inboxUrl}?c=conv-sari`);
    await expect(page.getByTestId('conversation-mode').textContent()).resolves.toBe('AI mode');
    await page.getByTestId('take-over').click();
    await page.waitForURL(/c=conv-sari/);
    await expect(page.getByTestId('conversation-mode').textContent()).resolves.toBe('Human-handled');
    expect(await page.getByTestId('take-over').isDisabled()).toBe(true);
    expect(await page.getByTestId('return-to-ai').isDisabled()).toBe(false);
    expect(emulator.admin.conversation('conv-sari')).toMatchObject({ mode: 'human', agentName: 'Agen CS' });

    await page.getByTestId('agent-reply-text').fill('Buka, Kak. Jam 09.00 sampai 15.00.');
    await page.getByTestId('agent-reply-send').click();
    await page.waitForURL(/c=conv-sari/);
    const last = page.getByTestId('message').last();
    expect(await last.textContent()).toContain('Buka, Kak. Jam 09.00 sampai 15.00.');
    expect(await last.textContent()).toContain('Agen CS');
    expect(await last.getByTestId('delivery-status').textContent()).toBe('delivered');
    await expect(page.getByTestId('conversation-status').textContent()).resolves.toBe('Ditangani');
    await expect(page.getByTestId('count-belum-dibaca').textContent()).resolves.toBe('0');
    await expect(page.getByTestId('count-ditangani').textContent()).resolves.toBe('3');

    const call = await waitFor(
      () =>
        receiver.calls.find(
          (c) => c.body.event === 'agent.message_out' && c.body.conversation_id === 'conv-sari',
        ),
      { timeoutMs: 5000, what: 'agent.message_out at the receiver' },
    );
    expect(call.headers.authorization).toBe('whsec');
    expect(call.body.message).toMatchObject({
      sender_name: 'Agen CS',
      agent: { name: 'Agen CS' },
      content: { type: 'text', text: 'Buka, Kak. Jam 09.00 sampai 15.00.' },
    });
    await page.screenshot({ path: '/tmp/emulator-inbox-after-reply.png', fullPage: true });
  });

  it('filters by tab, and Done moves the conversation to Selesai', async () => {
    await page.goto(emulator.inboxUrl);
    await page.getByTestId('tab-butuh-cs').click();
    await page.waitForURL(/status=Butuh/);
    const items = page.getByTestId('conversation-item');
    expect(await items.count()).toBe(1);
    expect(await items.first().getAttribute('data-conversation-id')).toBe('conv-tono');
    await items.first().locator('a').click();
    await page.getByTestId('done').click();
    await page.waitForURL(/c=conv-tono/);
    await expect(page.getByTestId('conversation-status').textContent()).resolves.toBe('Selesai');
    await expect(page.getByTestId('count-butuh-cs').textContent()).resolves.toBe('0');
    expect(emulator.admin.conversation('conv-tono')).toMatchObject({
      status: 'Selesai',
      needHuman: false,
      mode: 'ai',
    });
  });

  it('shows no business selector while the emulator hosts one business', async () => {
    await page.goto(emulator.inboxUrl);
    expect(await page.getByTestId('business-selector').count()).toBe(0);
  });

  describe('several businesses (issue 26, item 5)', () => {
    let several: EmulatorHandle;
    beforeAll(async () => {
      several = await startTestEmulator({
        businessName: 'Toko A',
        businesses: [{ businessId: 'toko-b', secret: 'sk-b', businessName: 'Toko B' }],
      });
      // The same conversation id in both businesses: two conversations.
      several.admin.createConversation({ id: 'conv-1', label: 'Budi A', channel: { type: 'telegram' } });
      several.admin.customerMessage('conv-1', { text: 'pesan untuk A' });
      const b = several.admin.business('toko-b');
      b.createConversation({ id: 'conv-1', label: 'Budi B', channel: { type: 'telegram' } });
      b.createConversation({ id: 'conv-2', label: 'Sari B', channel: { type: 'telegram' } });
      b.customerMessage('conv-1', { text: 'pesan untuk B' });
    });
    afterAll(async () => {
      await several?.close();
    });

    it('switches business with the selector, and its buttons act on the business shown', async () => {
      await page.goto(several.inboxUrl);
      const options = page.getByTestId('business-option');
      expect(await options.allTextContents()).toEqual(['Toko A biz-1', 'Toko B toko-b']);
      expect(await options.first().getAttribute('aria-current')).toBe('page');
      expect(await page.getByTestId('conversation-item').count()).toBe(1);

      await page.locator('[data-testid="business-option"][data-business-id="toko-b"]').click();
      await page.waitForURL(/business=toko-b/);
      expect(await page.title()).toContain('Toko B');
      expect(await page.getByTestId('conversation-item').count()).toBe(2);
      await page.locator('[data-conversation-id="conv-1"] a').click();
      await page.waitForURL(/business=toko-b.*c=conv-1/);
      expect(await page.getByTestId('message').allTextContents()).toEqual([
        expect.stringContaining('pesan untuk B'),
      ]);

      await page.getByTestId('take-over').click();
      await page.waitForURL(/business=toko-b.*c=conv-1/);
      await page.getByTestId('agent-reply-text').fill('Balasan dari Toko B');
      await page.getByTestId('agent-reply-send').click();
      await page.waitForURL(/business=toko-b.*c=conv-1/);
      expect(await page.getByTestId('message').last().textContent()).toContain('Balasan dari Toko B');
      expect(several.admin.business('toko-b').conversation('conv-1')).toMatchObject({ mode: 'human' });
      // The first business's conv-1 is untouched.
      expect(several.admin.conversation('conv-1')).toMatchObject({ mode: 'ai', messageCount: 1 });
      await page.screenshot({ path: '/tmp/emulator-inbox-business-b.png', fullPage: true });

      await page.locator('[data-testid="business-option"][data-business-id="biz-1"]').click();
      await page.waitForURL((url) => !url.search.includes('business='));
      expect(await page.title()).toContain('Toko A');
    });

    it('shows a notice for an unknown business and the first business page', async () => {
      await page.goto(`${several.inboxUrl}?business=toko-z`);
      expect(await page.getByTestId('notice').textContent()).toContain(
        'the emulator hosts no business "toko-z"',
      );
      expect(await page.title()).toContain('Toko A');
    });
  });
});
