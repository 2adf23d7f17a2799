import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EmulatorOptions } from '../../../src/emulator/emulator-options.js';
import { type EmulatorHandle, startEmulator } from '../../../src/emulator/start-emulator.js';

/** Shared pieces of the emulator's integration tests: real servers on 127.0.0.1, port 0. */
export const BUSINESS_ID = 'biz-1';
export const SECRET = 's3cret-key';
export const AUTH_TEXT = 'Data tidak valid. Mohon periksa kembali parameter dan header';

export function startTestEmulator(options: Partial<EmulatorOptions> = {}): Promise<EmulatorHandle> {
  return startEmulator({
    businessId: BUSINESS_ID,
    secret: SECRET,
    seed: 42,
    webhookRetryDelaysMs: [20, 40, 80],
    webhookTimeoutMs: 2000,
    ...options,
  });
}

/** A business's credentials (the test emulator's first business by default). */
export interface Credentials {
  readonly businessId: string;
  readonly secret: string;
}

const FIRST: Credentials = { businessId: BUSINESS_ID, secret: SECRET };

/** Valid credentials for each form: current `Business`+`Secret`, earlier `Bearer <secret>`. */
export function authHeaders(
  form: 'current' | 'earlier',
  credentials: Credentials = FIRST,
): Record<string, string> {
  return form === 'current'
    ? { Business: credentials.businessId, Secret: credentials.secret }
    : { Authorization: `Bearer ${credentials.secret}` };
}

export interface CallResult {
  readonly status: number;
  readonly headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON response fields
  readonly json: any;
}

/** One HTTP call; `body` objects are sent as JSON with Content-Type application/json. */
export async function call(
  baseUrl: string,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: unknown; rawBody?: string } = {},
): Promise<CallResult> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body }),
  });
  const text = await response.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: response.status, headers: response.headers, json };
}

/** A platform client in miniature: authenticated calls in the emulator's form, as one business. */
export function platform(emulator: EmulatorHandle, credentials: Credentials = FIRST) {
  const headers = authHeaders(emulator.form, credentials);
  return {
    send: (body: unknown) => call(emulator.url, 'POST', '/v1/message', { headers, body }),
    history: (conversationId: string, query = '') =>
      call(emulator.url, 'GET', `/v1/message/${encodeURIComponent(conversationId)}${query}`, { headers }),
    note: (body: unknown) => call(emulator.url, 'POST', '/v1/note', { headers, body }),
    needHuman: (body: unknown) =>
      call(emulator.url, 'POST', '/v1/conversation/need-human', { headers, body }),
    total: () => call(emulator.url, 'GET', '/v1/conversation/need-human/total', { headers }),
  };
}

export interface ReceivedCall {
  readonly headers: IncomingHttpHeaders;
  // biome-ignore lint/suspicious/noExplicitAny: webhook bodies are checked field by field
  readonly body: any;
  readonly at: number;
}

export interface Receiver {
  readonly url: string;
  readonly calls: ReceivedCall[];
  close(): Promise<void>;
}

/**
 * A webhook receiver on 127.0.0.1:0. `answer(n, body)` decides the reply to the n-th call (1-based);
 * by default every call gets HTTP 200 `{"success":true}`.
 */
export async function startReceiver(
  answer: (n: number, body: unknown) => { status: number; body: string } = () => ({
    status: 200,
    body: '{"success":true}',
  }),
): Promise<Receiver> {
  const calls: ReceivedCall[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {}
      calls.push({ headers: req.headers, body, at: Date.now() });
      const reply = answer(calls.length, body);
      res.writeHead(reply.status, { 'content-type': 'application/json' }).end(reply.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhook`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
