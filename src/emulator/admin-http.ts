import type { Request, Response } from 'express';
import type { z } from 'zod';
import { parseAdminBody } from './admin-requests.js';
import type { EmulatorAdmin } from './emulator-admin.js';
import type { EmulatorBusinesses } from './emulator-businesses.js';
import { EmulatorError } from './emulator-error.js';
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
      const business = namedBusiness(req);
      const id = param(req, 'id');
      const query = [
        business === null ? '' : `business=${encodeURIComponent(business)}`,
        id === '' ? '' : `c=${encodeURIComponent(id)}`,
      ].filter((part) => part !== '');
      res.redirect(
        303,
        redirectTarget(req, query.length === 0 ? INBOX_PATH : `${INBOX_PATH}?${query.join('&')}`),
      );
      return;
    }
    res.status(200).json(result ?? { ok: true });
  };
}

/** The header that names an admin request's business (the `business` query parameter also does). */
export const BUSINESS_HEADER = 'x-emulator-business';
/** `?business=*`: every business, on the endpoints that act on all of them (faults, storm, plan, seed, reset). */
export const EVERY_BUSINESS = '*';

/**
 * The business an admin request names (`?business=ID` or `X-Emulator-Business: ID`), or null
 * when it names none. Both given and different is a mistake worth saying.
 */
export function namedBusiness(req: Request): string | null {
  const query = typeof req.query.business === 'string' ? req.query.business.trim() : undefined;
  const headerValue = req.headers[BUSINESS_HEADER];
  const fromHeader = typeof headerValue === 'string' ? headerValue.trim() : undefined;
  if (query !== undefined && fromHeader !== undefined && query !== fromHeader) {
    throw new EmulatorError(
      'EMULATOR_BAD_REQUEST',
      `the request names two businesses (?business=${query} and X-Emulator-Business: ${fromHeader}): name one`,
    );
  }
  const named = query ?? fromHeader;
  return named === undefined || named === '' ? null : named;
}

/** True when the request names every business (`*`). */
export function namesEveryBusiness(req: Request): boolean {
  return namedBusiness(req) === EVERY_BUSINESS;
}

/** The admin of the business a request names; the first business when it names none. */
export function selectedAdmin(businesses: EmulatorBusinesses, req: Request): EmulatorAdmin {
  const named = namedBusiness(req);
  if (named === null) return businesses.first;
  if (named === EVERY_BUSINESS) {
    throw new EmulatorError(
      'EMULATOR_BAD_REQUEST',
      `${req.method} ${req.path} acts on one business: name it with ?business=ID (business=* works for faults, auth-storm, plan, random-seed and reset)`,
    );
  }
  return businesses.get(named);
}
