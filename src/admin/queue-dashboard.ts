import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { Queue } from 'bullmq';
import type { Express, RequestHandler } from 'express';
import { QUEUE_DASHBOARD_PATH } from './admin-surface.js';
import { type CspDirectives, STRICT_CSP } from './security-headers.js';

/**
 * What bull-board needs beyond STRICT_CSP, checked in Chromium (test/integration/admin): its React
 * app injects <style> elements and its loading screen has style attributes, hence inline styles;
 * its job-data editor draws icons from data: SVGs (in its code; the test does not open the editor).
 * Script stays same-origin, and so do its workers (worker-src falls back to script-src). Its
 * Google Fonts stylesheet is left blocked: the page falls back to the browser's fonts, and an
 * admin page asks no third party for anything.
 */
export const QUEUE_DASHBOARD_CSP: CspDirectives = {
  ...STRICT_CSP,
  'style-src': ["'self'", "'unsafe-inline'"],
  'img-src': ["'self'", 'data:'],
};

/** bull-board over the given queues, as a handler to mount at QUEUE_DASHBOARD_PATH (admin-surface.ts). */
export function queueDashboard(queues: readonly Queue[]): RequestHandler {
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(QUEUE_DASHBOARD_PATH);
  createBullBoard({ queues: queues.map((queue) => new BullMQAdapter(queue)), serverAdapter });
  // An Express app (typed `any` by bull-board): without its X-Powered-By header.
  const app: Express = serverAdapter.getRouter();
  app.disable('x-powered-by');
  return app;
}
