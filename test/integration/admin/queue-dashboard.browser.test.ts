import { existsSync } from 'node:fs';
import { Queue } from 'bullmq';
import { type Browser, type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { createKeyLayout } from '../../../src/queue/key-layout.js';
import { testRedisUrl } from '../../support/redis.js';
import { ADMIN_PASSWORD, ADMIN_USER, type AdminBridge, startAdminBridge } from './admin-bridge.js';

const CHROMIUM = '/usr/bin/chromium';

/**
 * bull-board under the admin surface's Content-Security-Policy, in a real headless Chromium: the
 * dashboard renders and navigates with nothing blocked but the Google Fonts stylesheet it links
 * (left blocked on purpose: queue-dashboard.ts), and no other page may frame it.
 * Screenshot: /tmp/admin-queue-dashboard.png.
 */
describe('the queue dashboard under the admin CSP (headless Chromium)', () => {
  let admin: AdminBridge;
  let browser: Browser;
  let context: BrowserContext;
  const consoleErrors: string[] = [];
  const pageErrors: string[] = [];

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `this test needs Chromium at ${CHROMIUM}: install it with \`apt-get install -y chromium\``,
      );
    }
    admin = await startAdminBridge(
      `{ username: ${ADMIN_USER}, password: "${ADMIN_PASSWORD}", listen: "127.0.0.1:0" }`,
    );
    // A timer due in an hour, so that the dashboard has a job to show (its data in bull-board's
    // editor, whose icons are data: SVGs and whose highlighter runs in a worker).
    const [shard] = createKeyLayout({ prefix: admin.prefix, shards: 1, tagged: false }).all;
    const timers = new Queue('timers', {
      connection: { url: testRedisUrl() },
      prefix: shard?.queuePrefix ?? '',
    });
    await timers.add(
      'dashboard-probe',
      { conversationId: 'conv-probe', note: 'shown by the dashboard' },
      { delay: 3_600_000 },
    );
    await timers.close();
    browser = await chromium.launch({
      headless: true,
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
    });
    context = await browser.newContext({
      viewport: { width: 1280, height: 860 },
      httpCredentials: { username: ADMIN_USER, password: ADMIN_PASSWORD },
    });
    context.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    context.on('weberror', (error) => pageErrors.push(error.error().message));
  });

  afterAll(async () => {
    await browser?.close();
    await admin?.close();
  });

  it('renders the queues and opens one, with nothing blocked but the third-party font', async () => {
    const page = await context.newPage();
    const answer = await page.goto(`${admin.adminUrl}/admin/queues`);
    expect(answer?.status()).toBe(200);
    expect(answer?.headers()['content-security-policy']).toContain("script-src 'self'");
    // The React app replaced the loading screen with the list of queues; open the timers' delayed job.
    const timers = page.getByRole('link', { name: /timers/ }).first();
    await timers.waitFor({ timeout: 15_000 });
    await timers.click();
    await page
      .getByText(/delayed/i)
      .first()
      .click();
    await page.getByText('dashboard-probe').first().waitFor({ timeout: 10_000 });
    await page
      .getByText(/shown by the dashboard/)
      .first()
      .waitFor({ timeout: 10_000 });
    await page.screenshot({ path: '/tmp/admin-queue-dashboard.png' });
    expect(pageErrors).toEqual([]);
    const blocked = consoleErrors.filter((text) => text.includes('Content Security Policy'));
    expect(blocked.filter((text) => !text.includes('https://fonts.googleapis.com'))).toEqual([]);
    await page.close();
  });

  it('cannot be shown in a frame of another page', async () => {
    const page = await context.newPage();
    const before = consoleErrors.length;
    await page.setContent(`<iframe src="${admin.adminUrl}/admin/queues"></iframe>`);
    await waitFor(() => consoleErrors.slice(before).some((text) => text.includes("frame-ancestors 'none'")), {
      timeoutMs: 10_000,
      what: 'Chromium to refuse the frame',
    });
    const frame = page.frames().find((f) => f !== page.mainFrame());
    expect(await frame?.locator('#root').count()).toBe(0);
    await page.close();
  });
});
