import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import type { ApiRequestRecord } from '../../../src/emulator/admin-views.js';
import type { EmulatorOptions } from '../../../src/emulator/emulator-options.js';
import { type EmulatorHandle, startEmulator } from '../../../src/emulator/start-emulator.js';
import type { PlatformClientOptions } from '../../../src/platform/client-options.js';
import { createPlatformClient, type PlatformClient } from '../../../src/platform/create-platform-client.js';
import type { PlatformErrorCode } from '../../../src/platform/platform-error.js';
import { isPlatformError, type PlatformError } from '../../../src/platform/platform-error.js';

/*
 * The conformance suite runs the real client (src/platform) against the real emulator
 * (src/emulator) over loopback HTTP. Neither imports the other; only these tests see both, so a
 * misreading of the interface document by one side shows up as a failing case here.
 */

export const FORMS = ['current', 'earlier'] as const;
export type Form = (typeof FORMS)[number];

export const BUSINESS_ID = 'biz-conformance';
/** Distinctive, so a leak into a log or an error message is easy to find. */
export const SECRET = 'sk-conf-9f2b7c1e';
export const INVALID_DATA_TEXT = 'Data tidak valid. Mohon periksa kembali parameter dan header';

/** Small delays: the suite has to stay fast (brief: retry 5..20 ms). */
export const FAST_RETRY = { retries: 3, minDelayMs: 5, maxDelayMs: 20 } as const;

export type Scheme = 'headers' | 'bearer' | 'bearer-secret';
/** The scheme each form documents: current `Business`/`Secret` headers, earlier plain bearer. */
export const NATIVE_SCHEME: Readonly<Record<Form, Scheme>> = { current: 'headers', earlier: 'bearer-secret' };

export function startConformanceEmulator(
  form: Form,
  options: Partial<EmulatorOptions> = {},
): Promise<EmulatorHandle> {
  return startEmulator({ businessId: BUSINESS_ID, secret: SECRET, form, seed: 7, ...options });
}

/**
 * One emulator per describe block (per form), reset to empty before each test: no state, faults,
 * rate-limit counts or request log carry over from one case to the next.
 */
export function useEmulator(form: Form, options: Partial<EmulatorOptions> = {}): () => EmulatorHandle {
  let emulator: EmulatorHandle | undefined;
  beforeAll(async () => {
    emulator = await startConformanceEmulator(form, options);
  });
  afterAll(async () => {
    await emulator?.close();
  });
  beforeEach(async () => {
    await emulator?.admin.reset({ empty: true });
  });
  return () => {
    if (!emulator) throw new Error('the emulator did not start (see beforeAll)');
    return emulator;
  };
}

export function clientFor(
  emulator: EmulatorHandle,
  overrides: Partial<PlatformClientOptions> & { scheme?: Scheme; businessId?: string; secret?: string } = {},
): PlatformClient {
  const { scheme, businessId, secret, ...rest } = overrides;
  const form = emulator.form;
  return createPlatformClient({
    baseUrl: emulator.url,
    form,
    auth: {
      scheme: scheme ?? NATIVE_SCHEME[form],
      businessId: businessId ?? BUSINESS_ID,
      secret: secret ?? SECRET,
    },
    retry: FAST_RETRY,
    timeoutMs: 2000,
    ...rest,
  });
}

export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail, it succeeded');
}

/** Asserts a PlatformError of `code` and returns it typed. */
export async function platformErrorOf(
  promise: Promise<unknown>,
  code: PlatformErrorCode,
): Promise<PlatformError> {
  const error = await rejectionOf(promise);
  if (!isPlatformError(error)) throw new Error(`expected a PlatformError, got ${String(error)}`);
  expect(error.code, error.message).toBe(code);
  // Whatever else it says, a secret never appears in what a user or a log sees.
  expect(error.message).not.toContain(SECRET);
  return error;
}

/** The platform requests the emulator logged (admin API requests are not platform requests). */
export function requestsSeen(emulator: EmulatorHandle): ApiRequestRecord[] {
  const seen = emulator.admin.requests();
  expect(JSON.stringify(seen)).not.toContain(SECRET);
  return seen;
}

/** The JSON body of the `index`-th platform request the emulator saw (POSTs only). */
export function sentBody(emulator: EmulatorHandle, index = 0): Record<string, unknown> {
  const body = requestsSeen(emulator)[index]?.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new Error(`request ${index} has no JSON object body (${JSON.stringify(body)})`);
  }
  return body as Record<string, unknown>;
}

export interface RawResult {
  readonly status: number;
  readonly headers: Headers;
  readonly json: unknown;
}

/** A raw HTTP call with fetch, for what the client refuses to send (its own validation). */
export async function raw(
  emulator: EmulatorHandle,
  method: 'GET' | 'POST',
  path: string,
  options: { body?: unknown; headers?: Record<string, string>; nativeAuth?: boolean } = {},
): Promise<RawResult> {
  const headers: Record<string, string> = {
    ...(options.nativeAuth === false ? {} : nativeHeaders(emulator.form)),
    ...options.headers,
  };
  if (options.body !== undefined) headers['content-type'] ??= 'application/json';
  const response = await fetch(`${emulator.url}${path}`, {
    method,
    headers,
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
  const text = await response.text();
  let json: unknown = text;
  try {
    json = JSON.parse(text);
  } catch {
    // keep the text
  }
  return { status: response.status, headers: response.headers, json };
}

export function nativeHeaders(form: Form): Record<string, string> {
  return form === 'current'
    ? { Business: BUSINESS_ID, Secret: SECRET }
    : { Authorization: `Bearer ${SECRET}` };
}

/** The error body each form delivers: current with HTTP 200, earlier with the HTTP status = rc. */
export function expectedErrorReply(form: Form, rc: number, errorMsg: string) {
  return { status: form === 'current' ? 200 : rc, json: { status: 0, rc, error_msg: errorMsg } };
}
