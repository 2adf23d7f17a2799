import type { Request, Response } from 'express';
import type { z } from 'zod';
import { parseAdminBody } from './admin-requests.js';
import { INBOX_PATH } from './inbox-page.js';

// How every admin endpoint (/_emulator/) reads its request and answers. JSON in and out; the inbox
// page's plain HTML forms post url-encoded bodies to the same endpoints and are redirected back to
// the page (303). The route groups (admin-*-routes.ts) use these, so they hold only what each
// endpoint does.

export function isForm(req: Request): boolean {
  return req.is('application/x-www-form-urlencoded') === 'application/x-www-form-urlencoded';
}

/** Only the inbox page itself is a valid redirect target (no open redirect). */
export function redirectTarget(req: Request, fallback: string): string {
  const body = req.body as Record<string, unknown> | undefined;
  const wanted = body?._redirect;
  return typeof wanted === 'string' && (wanted === INBOX_PATH || wanted.startsWith(`${INBOX_PATH}?`))
    ? wanted
    : fallback;
}

function bodyOf(req: Request): unknown {
  const body = req.body as unknown;
  if (body === undefined) return {};
  if (isForm(req) && typeof body === 'object' && body !== null) {
    const { _redirect: _ignored, ...rest } = body as Record<string, unknown>;
    return rest;
  }
  return body;
}

/** A route parameter ('' when absent). */
export function param(req: Request, name: string): string {
  const value = req.params[name];
  return typeof value === 'string' ? value : '';
}

/** The request's body validated by `schema` (a form's `_redirect` field left out); the error names the endpoint. */
export function readAdminBody<T>(schema: z.ZodType<T>, req: Request): T {
  return parseAdminBody(schema, bodyOf(req), `${req.method} ${req.originalUrl}`);
}

/** What an admin endpoint does: its answer (`{ ok: true }` when it has none). */
export type AdminHandler = (req: Request) => unknown;

/** A JSON endpoint that also serves the inbox forms (redirecting back to the conversation). */
export function adminAction(handler: AdminHandler) {
  return async (req: Request, res: Response): Promise<void> => {
    const result = await handler(req);
    if (isForm(req)) {
      const id = param(req, 'id');
      res.redirect(
        303,
        redirectTarget(req, id === '' ? INBOX_PATH : `${INBOX_PATH}?c=${encodeURIComponent(id)}`),
      );
      return;
    }
    res.status(200).json(result ?? { ok: true });
  };
}
