import type { ApiForm } from './channels.js';

/**
 * Response envelopes of the platform API (messaging-service-interface.md, "Errors"): an error body
 * is `{status: 0, rc, error_msg}`; the current form sends it with HTTP 200 (callers read the body),
 * the earlier form with the HTTP status equal to `rc`.
 */
export const INVALID_DATA_TEXT = 'Data tidak valid. Mohon periksa kembali parameter dan header';
/** Spec: "Body text says there are too many requests and to try later." Wording chosen. */
export const TOO_MANY_REQUESTS_TEXT = 'Too many requests, please try again later';
/** The fixed text naming a message list (webhook-payloads.md §3, older history answer). */
export const MESSAGE_LIST_TEXT = 'list message';
export const SUCCESS_TEXT = 'Sukses';
/** The plan lacks the API feature (webhook-payloads.md §3; interface, "Errors": 403 insufficient permission). */
export const NO_API_FEATURE_TEXT = 'Paket user tidak memiliki fitur API';

export interface ApiReply {
  readonly httpStatus: number;
  readonly body: unknown;
  readonly headers: Readonly<Record<string, string>>;
  /** `rc` of an error body, for the request log; null on success. */
  readonly rc: number | null;
  readonly errorMsg: string | null;
}

export function apiSuccess(body: unknown, headers: Readonly<Record<string, string>> = {}): ApiReply {
  return { httpStatus: 200, body, headers, rc: null, errorMsg: null };
}

export interface ApiErrorOptions {
  readonly headers?: Readonly<Record<string, string>>;
  /** `http` sends the real HTTP status even in the current form (a failing proxy or load balancer). */
  readonly delivery?: 'form' | 'http';
}

export function apiError(
  form: ApiForm,
  rc: number,
  errorMsg: string,
  options: ApiErrorOptions = {},
): ApiReply {
  const asHttp = form === 'earlier' || options.delivery === 'http';
  return {
    httpStatus: asHttp ? rc : 200,
    body: { status: 0, rc, error_msg: errorMsg },
    headers: options.headers ?? {},
    rc,
    errorMsg,
  };
}
