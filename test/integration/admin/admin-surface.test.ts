import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ADMIN_PASSWORD,
  ADMIN_USER,
  type AdminBridge,
  get,
  logLine,
  metricValue,
  startAdminBridge,
} from './admin-bridge.js';

const RIGHT = { username: ADMIN_USER, password: ADMIN_PASSWORD };
const ATTACKER = '127.0.0.2';
const OPERATOR = '127.0.0.3';

/** The headers every admin answer must carry, whatever its status. */
function expectSecurityHeaders(headers: Record<string, unknown>, frameAncestors = "'none'") {
  const csp = String(headers['content-security-policy']);
  expect(csp).toContain("default-src 'none'");
  expect(csp).toContain("script-src 'self'");
  expect(csp).toContain(`frame-ancestors ${frameAncestors}`);
  expect(csp).not.toContain('unsafe-eval');
  expect(headers['x-content-type-options']).toBe('nosniff');
  expect(headers['referrer-policy']).toBe('no-referrer');
  expect(headers['cache-control']).toBe('no-store');
  expect(headers['x-powered-by']).toBeUndefined();
}

describe('the admin surface (real bridge, real HTTP on loopback)', () => {
  let admin: AdminBridge | undefined;
  afterEach(async () => {
    await admin?.close();
    admin = undefined;
  });

  it('locks out an address after 5 wrong passwords, serves another, and logs and counts the attempts', async () => {
    // Failed logins summed up every 5 s: the 41 attempts below take well under that.
    admin = await startAdminBridge(
      `{ username: ${ADMIN_USER}, password: "${ADMIN_PASSWORD}", listen: "127.0.0.1:0" }`,
      5_000,
    );
    const { adminUrl, receiverUrl, logs } = admin;
    expect(adminUrl).not.toBe(receiverUrl);
    const page = `${adminUrl}/admin/queues`;

    const statuses: number[] = [];
    let retryAfter: string | undefined;
    for (let attempt = 1; attempt <= 40; attempt += 1) {
      const answer = await get(page, {
        from: ATTACKER,
        auth: { username: ADMIN_USER, password: `guess-${attempt}` },
      });
      statuses.push(answer.status);
      if (answer.status === 429) {
        retryAfter ??= String(answer.headers['retry-after']);
        expectSecurityHeaders(answer.headers);
      }
    }
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses.indexOf(429)).toBe(5);
    expect(statuses.slice(5).every((status) => status === 429)).toBe(true);
    expect(Number(retryAfter)).toBeGreaterThan(0);
    expect(Number(retryAfter)).toBeLessThanOrEqual(15);

    // The right password from another address is served at once; from the locked one, not.
    const served = await get(page, { from: OPERATOR, auth: RIGHT });
    expect(served.status).toBe(200);
    expect(served.body).toContain('<html');
    expect((await get(page, { from: ATTACKER, auth: RIGHT })).status).toBe(429);

    // One line at the first failure, then one line with the count for the interval.
    const summary = await logLine(
      logs,
      (line) => String(line.msg).includes('more failed admin login(s) from 127.0.0.2'),
      'the summary line of the failed logins',
    );
    expect(summary).toMatchObject({ client: ATTACKER, repeated: 40, refused: 4, throttled: 36 });
    const aboutLogins = logs.filter((line) => String(line.msg).includes('admin login'));
    expect(aboutLogins).toHaveLength(2);
    expect(aboutLogins[0]).toMatchObject({ client: ATTACKER, status: 401, failures: 1 });
    const everything = JSON.stringify(logs);
    expect(everything).not.toContain('guess-');
    expect(everything).not.toContain(ADMIN_PASSWORD);

    // The metric the alert watches, on the receiver's /metrics.
    const metrics = (await get(`${receiverUrl}/metrics`)).body;
    expect(metricValue(metrics, 'convo_bridge_admin_login_failures_total', { outcome: 'refused' })).toBe(5);
    expect(metricValue(metrics, 'convo_bridge_admin_login_failures_total', { outcome: 'throttled' })).toBe(
      36,
    );

    // admin.listen: nothing of the admin surface on the webhook port.
    expect((await get(`${receiverUrl}/admin/queues`, { auth: RIGHT })).status).toBe(404);
  });

  it('puts the security headers on every answer of /admin/queues: the page, its assets, its API, a 401', async () => {
    admin = await startAdminBridge(`{ username: ${ADMIN_USER}, password: "${ADMIN_PASSWORD}" }`);
    const page = `${admin.adminUrl}/admin/queues`;
    const html = await get(page, { auth: RIGHT });
    expect(html.status).toBe(200);
    expectSecurityHeaders(html.headers);
    expect(html.headers['x-frame-options']).toBe('DENY');
    const script = /src="(static\/js\/main\.[^"]+\.js)"/.exec(html.body)?.[1];
    expect(script).toBeDefined();
    const asset = await get(`${page}/${script}`, { auth: RIGHT });
    expect(asset.status).toBe(200);
    expectSecurityHeaders(asset.headers);
    const api = await get(`${page}/api/queues`, { auth: RIGHT });
    expect(api.status).toBe(200);
    expectSecurityHeaders(api.headers);
    const refused = await get(page);
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toContain('Basic');
    expectSecurityHeaders(refused.headers);
  });

  it('lets the configured origins frame the admin pages, and no other', async () => {
    admin = await startAdminBridge(
      `{ username: ${ADMIN_USER}, password: "${ADMIN_PASSWORD}", frame_ancestors: [ "https://ops.example.com" ] }`,
    );
    const html = await get(`${admin.adminUrl}/admin/queues`, { auth: RIGHT });
    expect(html.status).toBe(200);
    expectSecurityHeaders(html.headers, 'https://ops.example.com');
    expect(html.headers['x-frame-options']).toBeUndefined();
  });

  it('refuses to start when admin.listen cannot listen, naming the setting', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as { port: number };
    try {
      const started = startAdminBridge(
        `{ username: ${ADMIN_USER}, password: "${ADMIN_PASSWORD}", listen: "127.0.0.1:${port}" }`,
      );
      await expect(started).rejects.toMatchObject({
        code: 'EADDRINUSE',
        message: expect.stringContaining(`admin.listen 127.0.0.1:${port}: cannot listen`),
      });
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});
