import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { Queue } from 'bullmq';
import type { Express, NextFunction, Request, Response } from 'express';
import { equalsConstantTime } from './constant-time.js';

export const ADMIN_BASE_PATH = '/admin/queues';

/** HTTP basic auth in constant time; answers 401 with a realm so browsers ask for the password. */
export function basicAuth(username: string, password: string) {
  return (req: Request, res: Response, next: NextFunction) => {
    const header = req.headers.authorization ?? '';
    const [scheme, encoded] = header.split(' ');
    const decoded =
      scheme?.toLowerCase() === 'basic' && encoded ? Buffer.from(encoded, 'base64').toString('utf8') : '';
    const colon = decoded.indexOf(':');
    const user = colon >= 0 ? decoded.slice(0, colon) : '';
    const pass = colon >= 0 ? decoded.slice(colon + 1) : '';
    // Evaluate both comparisons, always: no early exit that tells which half was wrong.
    const userOk = equalsConstantTime(user, username);
    const passOk = equalsConstantTime(pass, password);
    if (userOk && passOk) {
      next();
      return;
    }
    res.status(401).set('www-authenticate', 'Basic realm="convo-bridge admin", charset="UTF-8"').json({
      success: false,
      error: 'admin login required (admin.username / admin.password in the config)',
    });
  };
}

/**
 * bull-board at /admin/queues behind basic auth. Off (nothing mounted, so a 404) when no admin
 * password is configured: an open queue dashboard would let anyone retry or delete jobs.
 */
export function mountAdmin(
  app: Express,
  queues: Queue[],
  admin: { username: string; password?: string | undefined },
) {
  if (!admin.password) return false;
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(ADMIN_BASE_PATH);
  createBullBoard({ queues: queues.map((queue) => new BullMQAdapter(queue)), serverAdapter });
  app.use(ADMIN_BASE_PATH, basicAuth(admin.username, admin.password), serverAdapter.getRouter());
  return true;
}
