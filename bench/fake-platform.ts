/**
 * The benches' own fake platform API (current form), so that a bench that needs only a platform to
 * call runs from any clone, without the shared side-by-side harness. It answers and records what
 * the harness's fake-api.mjs does, read by businesses-load.ts the same way:
 *
 *   POST /v1/message, /v1/note, /v1/conversation/need-human -> success, recorded per conversation
 *   GET  /v1/message/{conversation_id}[?limit&last_id]       -> what was sent here (history)
 *   GET  /_stats[?summary=1], POST /_reset, GET /version, GET /healthz
 *
 * Auth: `Business` + `Secret` headers or `Authorization: Bearer base64(business:secret)`; when
 * `expect` is given the values must match it, else the platform's "Data tidak valid" answer (its
 * 401 in a 200). Timestamps `t` are process.hrtime in ms (CLOCK_MONOTONIC), comparable with the
 * load generator's on the same machine. Loopback only.
 *
 * Run as a child process (`node --import tsx bench/fake-platform.ts`, PORT, EXPECT_BUSINESS,
 * EXPECT_SECRET) so that it does not share the load generator's event loop.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

const ERROR_MESSAGE = 'Data tidak valid. Mohon periksa kembali parameter dan header';
const ENDPOINTS: Readonly<Record<string, 'message' | 'note' | 'need-human'>> = {
  '/v1/message': 'message',
  '/v1/note': 'note',
  '/v1/conversation/need-human': 'need-human',
};
type Endpoint = 'message' | 'note' | 'need-human';

interface Call {
  ep: Endpoint;
  t: number;
  ok: boolean;
  status: number;
  err?: string;
  text?: string;
  note?: string;
  media?: unknown;
}

interface Sent {
  id: number;
  message_id: string;
  conversation_id: string;
  sender: 'agent';
  sender_name: string;
  message: string;
  caption: '';
  message_type: string;
  mime_type: string;
  sent_at: string;
  delivery_status: 'sent';
}

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;
/** WIB (UTC+7) `YYYY-MM-DD HH:MM:SS`, as the interface document gives sent_at. */
const wib = (ms: number) => new Date(ms + 7 * 3_600_000).toISOString().slice(0, 19).replace('T', ' ');

function freshState() {
  const counts: Record<Endpoint, number> = { message: 0, note: 0, 'need-human': 0 };
  return {
    total: 0,
    ok: 0,
    unauthorized: 0,
    invalid: 0,
    counts,
    okCounts: { ...counts },
    first_t: null as number | null,
    last_t: null as number | null,
    first_ok_t: null as number | null,
    last_ok_t: null as number | null,
    noteSeq: 0,
    historySeq: 0,
    historyReads: 0,
    history: new Map<string, Sent[]>(),
    conversations: new Map<string, Call[]>(),
  };
}

export interface FakePlatformOptions {
  /** The business id and secret the API accepts; any non-empty pair when omitted. */
  expect?: { business: string; secret: string };
}

/** The fake's HTTP server (not listening yet). */
export function createFakePlatform(options: FakePlatformOptions = {}): Server {
  let state = freshState();
  const authorised = (req: IncomingMessage): boolean => {
    let business = req.headers.business;
    let secret = req.headers.secret;
    if (typeof business !== 'string' || typeof secret !== 'string' || !business || !secret) {
      const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
      const decoded = bearer === undefined ? '' : Buffer.from(bearer, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon <= 0 || colon === decoded.length - 1) return false;
      business = decoded.slice(0, colon);
      secret = decoded.slice(colon + 1);
    }
    if (options.expect === undefined) return true;
    return business === options.expect.business && secret === options.expect.secret;
  };
  const remember = (conversation: string, message: string, type: string, senderName: string) => {
    state.historySeq += 1;
    const id = state.historySeq;
    const list = state.history.get(conversation) ?? [];
    list.push({
      id,
      message_id: `m-${id}`,
      conversation_id: conversation,
      sender: 'agent',
      sender_name: senderName,
      message,
      caption: '',
      message_type: type,
      mime_type: type === 'text' ? 'text/plain' : '',
      sent_at: wib(Date.now()),
      delivery_status: 'sent',
    });
    state.history.set(conversation, list);
  };
  const record = (conversation: string | null, call: Call) => {
    state.first_t ??= call.t;
    state.last_t = call.t;
    state.counts[call.ep] += 1;
    if (call.ok) {
      state.ok += 1;
      state.okCounts[call.ep] += 1;
      state.first_ok_t ??= call.t;
      state.last_ok_t = call.t;
    }
    if (conversation !== null) {
      const calls = state.conversations.get(conversation) ?? [];
      calls.push(call);
      state.conversations.set(conversation, calls);
    }
  };

  const api = (req: IncomingMessage, res: ServerResponse, ep: Endpoint, raw: string) => {
    state.total += 1;
    let body: Record<string, unknown> | null;
    try {
      const parsed: unknown = raw.length > 0 ? JSON.parse(raw) : {};
      body = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : null;
    } catch {
      body = null;
    }
    const rawConversation = body?.conversation_id;
    const conversation =
      rawConversation === undefined || rawConversation === null || rawConversation === ''
        ? null
        : String(rawConversation);
    const call: Call = { ep, t: nowMs(), ok: false, status: 200 };
    const finish = (answer: unknown) => {
      record(conversation, call);
      send(res, 200, answer);
    };
    const refuse = (rc: number, err: string, counter: 'unauthorized' | 'invalid') => {
      state[counter] += 1;
      call.err = err;
      finish({ status: 0, rc, error_msg: ERROR_MESSAGE });
    };
    if (!authorised(req)) return refuse(401, 'auth', 'unauthorized');
    if (body === null || conversation === null) return refuse(400, 'invalid', 'invalid');
    if (ep === 'message') {
      if (body.text === undefined && body.media === undefined) return refuse(400, 'invalid', 'invalid');
      call.ok = true;
      const media = body.media as { url?: unknown; type?: unknown } | undefined;
      if (body.text !== undefined) call.text = String(body.text);
      if (media !== undefined) call.media = media;
      remember(
        conversation,
        media ? String(media.url) : String(body.text),
        media ? String(media.type) : 'text',
        'Toko',
      );
      return finish({ conversation_id: conversation, success: true });
    }
    if (ep === 'note') {
      if (!body.note) return refuse(400, 'invalid', 'invalid');
      call.ok = true;
      call.note = String(body.note);
      state.noteSeq += 1;
      remember(conversation, String(body.note), 'text', 'api');
      return finish({ message_id: `n-${state.noteSeq}`, success: true });
    }
    call.ok = true;
    return finish({ success: true, conversation_id: conversation });
  };

  const history = (req: IncomingMessage, res: ServerResponse, conversation: string, query: string) => {
    state.historyReads += 1;
    if (!authorised(req)) return send(res, 200, { status: 0, rc: 401, error_msg: ERROR_MESSAGE });
    const params = new URLSearchParams(query);
    const lastId = Number(params.get('last_id') ?? 0);
    const limit = Number(params.get('limit') ?? 0);
    let list = (state.history.get(conversation) ?? []).filter((m) => m.id > lastId);
    if (limit > 0) list = list.slice(0, limit);
    send(res, 200, {
      status: 1,
      rc: 200,
      message: 'List message',
      data: { list: list.length > 0 ? list : null, last_id: list.at(-1)?.id ?? 0 },
      ts: Math.floor(Date.now() / 1000),
    });
  };

  const stats = (summary: boolean) => ({
    total: state.total,
    ok: state.ok,
    unauthorized: state.unauthorized,
    invalid: state.invalid,
    fault429: 0,
    fault500: 0,
    counts: state.counts,
    okCounts: state.okCounts,
    first_t: state.first_t,
    last_t: state.last_t,
    first_ok_t: state.first_ok_t,
    last_ok_t: state.last_ok_t,
    history_reads: state.historyReads,
    conversation_count: state.conversations.size,
    now_t: nowMs(),
    ...(summary ? {} : { conversations: Object.fromEntries(state.conversations) }),
  });

  const server = createServer((req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q >= 0 ? url.slice(0, q) : url;
    const query = q >= 0 ? url.slice(q + 1) : '';
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const ep = ENDPOINTS[path];
      if (ep !== undefined && req.method === 'POST')
        return api(req, res, ep, Buffer.concat(chunks).toString());
      if (path.startsWith('/v1/message/') && req.method === 'GET') {
        return history(req, res, decodeURIComponent(path.slice('/v1/message/'.length)), query);
      }
      if (path === '/_stats' && req.method === 'GET') return send(res, 200, stats(/summary=1/.test(query)));
      if (path === '/_reset' && req.method === 'POST') {
        state = freshState();
        return send(res, 200, { reset: true });
      }
      if (path === '/version' && req.method === 'GET') return send(res, 200, { version: 'v1.3' });
      if (path === '/healthz') return send(res, 200, { ok: true });
      return send(res, 404, { status: 0, rc: 404, error_msg: 'Not found' });
    });
  });
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  return server;
}

function send(res: ServerResponse, status: number, answer: unknown): void {
  const body = JSON.stringify(answer);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** Listens on 127.0.0.1:port (0: a free one) and returns the port. */
export function listenOnLoopback(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

// As a child process: PORT, and EXPECT_BUSINESS + EXPECT_SECRET when the credentials are checked.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { EXPECT_BUSINESS, EXPECT_SECRET } = process.env;
  const server = createFakePlatform(
    EXPECT_BUSINESS && EXPECT_SECRET ? { expect: { business: EXPECT_BUSINESS, secret: EXPECT_SECRET } } : {},
  );
  const port = await listenOnLoopback(server, Number(process.env.PORT ?? 0));
  process.stdout.write(
    `${JSON.stringify({ fake_platform: `http://127.0.0.1:${port}`, pid: process.pid })}\n`,
  );
  const stop = () => {
    server.close(() => process.exit(0));
    setTimeout(() => process.exit(0), 1_000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
