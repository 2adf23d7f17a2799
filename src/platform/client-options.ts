import { z } from 'zod';
import { ConvoBridgeError } from '../base/errors.js';
import type { PlatformOperation } from './operations.js';
import type { PlatformErrorCode } from './platform-error.js';

/** What `hooks.beforeRequest` sees before every HTTP attempt (no secrets, no headers). */
export interface BeforeRequestInfo {
  operation: PlatformOperation;
  method: string;
  path: string;
  /** 1 for the first attempt, 2 for the first retry, ... */
  attempt: number;
}

/** What `hooks.afterResponse` sees after every HTTP attempt, failed or not. */
export interface AfterResponseInfo extends BeforeRequestInfo {
  /** HTTP status of the answer; null when there was none. */
  statusCode: number | null;
  /** 'ok', or the PlatformError code this attempt ended with. */
  outcome: 'ok' | PlatformErrorCode;
  durationMs: number;
}

export interface PlatformClientHooks {
  /**
   * Awaited before every HTTP attempt, retries included (the worker plugs its distributed rate
   * limiter in here). If it throws, the call fails with that error, unretried.
   */
  beforeRequest?: (info: BeforeRequestInfo) => Promise<void> | void;
  /** Called after every attempt (metrics). Errors it throws are ignored: metrics never fail a call. */
  afterResponse?: (info: AfterResponseInfo) => void;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);
// Header values go on the wire as they are: a CR or LF would let them inject headers.
const HEADER_SAFE = /^[^\r\n\0]*$/;
const notBlank = (what: string) =>
  z
    .string({ error: `${what} must be a string` })
    .min(1, { error: `${what} must not be empty` })
    .refine((value) => value.trim() === value, { error: `${what} must not start or end with spaces` })
    .refine((value) => HEADER_SAFE.test(value), { error: `${what} must not contain line breaks` });

const fn = <T>(what: string) =>
  z.custom<T>((value) => typeof value === 'function', { error: `${what} must be a function` });

const RetrySchema = z
  .object({
    retries: z.int().min(0).max(10).default(3),
    minDelayMs: z.int().min(0).max(60_000).default(100),
    maxDelayMs: z.int().min(0).max(300_000).default(2_000),
    maxRetryAfterMs: z.int().min(0).max(3_600_000).default(5_000),
  })
  .strict()
  .refine((retry) => retry.maxDelayMs >= retry.minDelayMs, {
    error: 'maxDelayMs must be at least minDelayMs',
    path: ['maxDelayMs'],
  });

export const PlatformClientOptionsSchema = z
  .object({
    baseUrl: z
      .string({ error: 'baseUrl must be a string such as https://api.example.com' })
      .superRefine((value, ctx) => {
        const problem = checkBaseUrlShape(value);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      }),
    form: z.enum(['current', 'earlier'], { error: "form must be 'current' or 'earlier'" }),
    auth: z
      .object({
        scheme: z.enum(['headers', 'bearer', 'bearer-secret'], {
          error: "auth.scheme must be 'headers', 'bearer' or 'bearer-secret'",
        }),
        businessId: notBlank('auth.businessId').optional(),
        secret: notBlank('auth.secret'),
      })
      .strict(),
    timeoutMs: z.int().min(1).max(300_000).default(10_000),
    retry: z.union([z.literal(false), RetrySchema]).default({
      retries: 3,
      minDelayMs: 100,
      maxDelayMs: 2_000,
      maxRetryAfterMs: 5_000,
    }),
    hooks: z
      .object({
        beforeRequest:
          fn<NonNullable<PlatformClientHooks['beforeRequest']>>('hooks.beforeRequest').optional(),
        afterResponse:
          fn<NonNullable<PlatformClientHooks['afterResponse']>>('hooks.afterResponse').optional(),
      })
      .strict()
      .default({}),
    /** Allow plain http to a host that is not loopback (e.g. an emulator in docker compose). */
    allowInsecureHttp: z.boolean().default(false),
  })
  .strict()
  .superRefine((options, ctx) => {
    const { scheme, businessId } = options.auth;
    if ((scheme === 'headers' || scheme === 'bearer') && businessId === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['auth', 'businessId'],
        message: `auth scheme '${scheme}' needs auth.businessId (the Business ID from the dashboard settings)`,
      });
    }
    if (scheme === 'bearer' && businessId?.includes(':')) {
      ctx.addIssue({
        code: 'custom',
        path: ['auth', 'businessId'],
        message:
          "auth.businessId must not contain ':' with the 'bearer' scheme (it joins id and secret with ':')",
      });
    }
    // Spec, Authentication rule 2: HTTPS only. Plain http is for loopback (tests, the emulator).
    const url = URL.canParse(options.baseUrl) ? new URL(options.baseUrl) : undefined;
    if (url?.protocol === 'http:' && !options.allowInsecureHttp && !LOOPBACK_HOSTS.has(url.hostname)) {
      ctx.addIssue({
        code: 'custom',
        path: ['baseUrl'],
        message:
          'baseUrl must use https (the secret travels in headers); plain http is allowed for loopback only, or set allowInsecureHttp',
      });
    }
  });

/** Options as the caller writes them. */
export type PlatformClientOptions = z.input<typeof PlatformClientOptionsSchema>;

export interface RetrySettings {
  retries: number;
  minDelayMs: number;
  maxDelayMs: number;
  maxRetryAfterMs: number;
}

/** Options after validation and defaults: what the client runs on. */
export interface ResolvedClientOptions {
  /** Without a trailing slash; paths are appended to it. */
  baseUrl: string;
  form: 'current' | 'earlier';
  auth: { scheme: 'headers' | 'bearer' | 'bearer-secret'; businessId?: string | undefined; secret: string };
  timeoutMs: number;
  retry: RetrySettings;
  hooks: PlatformClientHooks;
}

/** Bad options given to createPlatformClient. The message lists every problem; never a secret. */
export class PlatformClientOptionsError extends ConvoBridgeError {
  declare readonly code: 'INVALID_PLATFORM_CLIENT_OPTIONS';
  readonly problems: readonly string[];

  constructor(problems: readonly string[], cause: unknown) {
    super(`invalid platform client options: ${problems.join('; ')}`, {
      code: 'INVALID_PLATFORM_CLIENT_OPTIONS',
      cause,
    });
    this.problems = problems;
  }
}

/** Validates and completes the options; throws PlatformClientOptionsError listing every problem. */
export function resolveClientOptions(input: unknown): ResolvedClientOptions {
  const parsed = PlatformClientOptionsSchema.safeParse(input);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const where = issue.path.length > 0 ? issue.path.join('.') : 'options';
      // zod's own texts never echo the value, so a secret cannot leak through them.
      return `${where}: ${issue.message}`;
    });
    // The cause is the ZodError, which holds issues only, not the input.
    throw new PlatformClientOptionsError(problems, parsed.error);
  }
  const options = parsed.data;
  const retry: RetrySettings =
    options.retry === false
      ? { retries: 0, minDelayMs: 0, maxDelayMs: 0, maxRetryAfterMs: 0 }
      : options.retry;
  const hooks: PlatformClientHooks = {};
  if (options.hooks.beforeRequest) hooks.beforeRequest = options.hooks.beforeRequest;
  if (options.hooks.afterResponse) hooks.afterResponse = options.hooks.afterResponse;
  return {
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    form: options.form,
    auth: options.auth,
    timeoutMs: options.timeoutMs,
    retry,
    hooks,
  };
}

function checkBaseUrlShape(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'baseUrl must be an absolute URL such as https://api.example.com';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'baseUrl must use https';
  if (url.username !== '' || url.password !== '') return 'baseUrl must not contain credentials; use auth';
  if (url.search !== '' || url.hash !== '') return 'baseUrl must not have a query string or fragment';
  return undefined;
}
