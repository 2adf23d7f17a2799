import { createServer, type OutgoingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { type Logger, pino } from 'pino';
import { Registry } from 'prom-client';
import { describeError } from '../base/errors.js';
import type { ConversationEvent } from '../events/conversation-event.js';
import { activeTracing, type TraceSpan } from '../observe/trace-context.js';
import { answerClientError } from './answer-client-error.js';
import { createEventProducer, DEFAULT_EVENT_JOB_OPTIONS } from './event-producer.js';
import { quarantineBody } from './quarantine-store.js';
import { checkWebhookHead, type ReceiveOutcome, receiveWebhookBody } from './receive-webhook.js';
import { createReceiverMetrics } from './receiver-metrics.js';
import { type ReceiverOptions, resolveReceiverOptions } from './receiver-options.js';
import { createSecretVerifier } from './verify-secret.js';
import {
  badRequest,
  failure,
  payloadTooLarge,
  REPLIES,
  unsupportedMediaType,
  type WebhookReply,
} from './webhook-reply.js';

export interface ListeningReceiver {
  /** e.g. `http://127.0.0.1:39123` (no path). */
  url: string;
  port: number;
  /** Stops this server (the receiver's Redis stays open; `receiver.close()` closes all). */
  close(): Promise<void>;
}

export interface Receiver {
  /** The Express app (mount it elsewhere, or call `listen`). */
  readonly app: Express;
  /** The webhook path in use. */
  readonly path: string;
  /** Listens on `host:port` (default 127.0.0.1, port 0 = a free one). */
  listen(port?: number, host?: string): Promise<ListeningReceiver>;
  /** Connected to Redis and not closed (cheap; `GET /readyz` does a real write). */
  isReady(): boolean;
  /** Stops every server it started and closes Redis. Idempotent. */
  close(): Promise<void>;
}

/**
 * Values that never reach a log line. A pino child's `redact` replaces its parent's, so this list
 * also covers the usual secret-bearing names, not only the webhook's headers.
 */
const REDACTED_PATHS = [
  'headers.authorization',
  'headers.secret',
  'req.headers.authorization',
  'req.headers.secret',
  'authorization',
  'secret',
  'secrets',
  'password',
  '*.authorization',
  '*.secret',
  '*.secrets',
  '*.password',
  '*.secretKey',
  '*.secret_key',
];

const JSON_TYPE = 'application/json; charset=utf-8';

const EXPECTATION_FAILED = failure(
  417,
  'bad_request',
  'the Expect header asks for something this receiver does not do; send the webhook without it',
);

interface RequestState {
  started: bigint;
  /** `webhook receive`, when tracing is on. */
  span?: TraceSpan;
}

/**
 * The webhook receiver: verifies the shared secret, normalises the body into a ConversationEvent,
 * stores it durably and exactly once (ingestEvent), and only then answers `{"success":true}`.
 * Answers are JSON only, never an HTML page or a stack trace. See receive-webhook.ts for the order
 * of checks and webhook-reply.ts for why each status code.
 */
export function createReceiver(options: ReceiverOptions): Receiver {
  const config = resolveReceiverOptions(options);
  const log: Logger = (options.logger ?? pino({ level: 'silent' })).child(
    { component: 'receiver' },
    { redact: { paths: REDACTED_PATHS, censor: '[redacted]' } },
  );
  const verify = createSecretVerifier(config.secrets);
  const registry = options.metrics ?? new Registry();
  const metrics = createReceiverMetrics(registry);
  const producer = createEventProducer({
    ...(config.redisUrl === undefined ? {} : { redisUrl: config.redisUrl }),
    ...(options.redis === undefined ? {} : { redis: options.redis }),
    ...(options.topology === undefined ? {} : { topology: options.topology }),
    ...(options.layout === undefined ? {} : { layout: options.layout }),
    ...(options.replicasAck === undefined ? {} : { replicasAck: options.replicasAck }),
    ...(options.replicasAckTimeoutMs === undefined
      ? {}
      : { replicasAckTimeoutMs: options.replicasAckTimeoutMs }),
    ...(options.layoutChecked === undefined ? {} : { layoutChecked: options.layoutChecked }),
    prefix: config.prefix,
    dedupeWindowSeconds: config.dedupeWindowSeconds,
    jobOptions: { ...DEFAULT_EVENT_JOB_OPTIONS, ...options.jobOptions },
    commandTimeoutMs: Math.min(1_000, config.enqueueTimeoutMs),
    logger: log,
  });
  const quarantineStore = {
    redis: producer.redis,
    keys: producer.keys,
    maxEntries: config.quarantineMax,
    maxBodyBytes: config.quarantineBodyBytes,
  };
  // Read once: tracing is installed (or not) before the receiver is built (run-bridge.ts).
  const tracing = activeTracing();
  const effects = {
    ingest: tracing
      ? (event: ConversationEvent) =>
          tracing.store(
            event,
            () => producer.ingest(event),
            (result) => ({ outcome: result.outcome, jobId: result.jobId }),
          )
      : producer.ingest,
    quarantine: (input: Parameters<typeof quarantineBody>[1]) => quarantineBody(quarantineStore, input),
    enqueueTimeoutMs: config.enqueueTimeoutMs,
  };
  const stateOf = new WeakMap<Request, RequestState>();

  /**
   * Node's own writeHead/end, not Express's `res.send`: that one re-derives the content type, length
   * and freshness of every answer, which cost about 5% of the bridge's CPU under load (profile).
   * Headers set earlier (`connection: close`) are kept by writeHead.
   */
  const send = (res: Response, reply: WebhookReply) => {
    const headers: OutgoingHttpHeaders = {
      'content-type': JSON_TYPE,
      'content-length': Buffer.byteLength(reply.body),
      'x-convo-bridge-outcome': reply.outcome,
    };
    if (reply.status === 405) headers.allow = 'POST';
    res.writeHead(reply.status, headers);
    res.end(reply.body);
  };

  /** Answers a webhook request, counts it, and writes its log line. */
  const finish = (req: Request, res: Response, outcome: ReceiveOutcome) => {
    const { reply } = outcome;
    send(res, reply);
    const state = stateOf.get(req);
    const seconds = state ? Number(process.hrtime.bigint() - state.started) / 1e9 : 0;
    metrics.observe(reply.outcome, seconds);
    const fields = {
      outcome: reply.outcome,
      status: reply.status,
      ms: Math.round(seconds * 1e4) / 10,
      conversationId: outcome.event?.conversationId ?? outcome.problem?.conversationId ?? null,
      eventKey: outcome.event?.key ?? null,
    };
    if (state?.span) endWebhookSpan(state.span, outcome);
    switch (reply.outcome) {
      case 'unauthorized':
        log.warn(
          {
            ...fields,
            remoteAddress: req.socket.remoteAddress ?? null,
            // Which headers were present, never their values.
            secretHeaders: ['authorization', 'secret'].filter((h) => req.headers[h] !== undefined),
          },
          'webhook rejected: secret missing or wrong',
        );
        break;
      case 'unavailable':
        log.warn(
          { ...fields, err: describeError(outcome.error) },
          'webhook answered 503: Redis could not store it',
        );
        break;
      case 'quarantined':
      case 'unknown_event':
        log.info(
          {
            ...fields,
            quarantineId: outcome.quarantineId ?? null,
            reason: outcome.problem?.reason ?? 'unknown_event',
            detail: outcome.problem?.message ?? null,
            eventName: outcome.event?.name ?? outcome.problem?.eventName ?? null,
          },
          'webhook kept in quarantine',
        );
        break;
      case 'error':
        log.error({ ...fields, err: outcome.error }, 'webhook failed with an internal error');
        break;
      default:
        if (log.isLevelEnabled('debug')) log.debug(fields, 'webhook');
    }
  };

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  app.get('/healthz', (_req, res) => {
    res.status(200).set('content-type', JSON_TYPE).send('{"status":"ok"}');
  });
  app.get('/readyz', async (_req, res) => {
    try {
      await producer.probe();
      const notReady = options.readiness ? await options.readiness() : null;
      if (notReady !== null) {
        res
          .status(503)
          .set('content-type', JSON_TYPE)
          .send(JSON.stringify({ status: 'unavailable', error: notReady }));
        return;
      }
      res.status(200).set('content-type', JSON_TYPE).send('{"status":"ready"}');
    } catch (error) {
      log.warn({ err: describeError(error) }, 'not ready: Redis does not accept writes');
      res
        .status(503)
        .set('content-type', JSON_TYPE)
        .send(
          JSON.stringify({
            status: 'unavailable',
            error: 'Redis does not accept writes; check that it is running',
          }),
        );
    }
  });
  if (options.metrics) {
    const exposed = options.metrics;
    app.get('/metrics', async (_req, res) => {
      res
        .status(200)
        .set('content-type', exposed.contentType)
        .send(await exposed.metrics());
    });
  }

  const parseBody = express.raw({ limit: config.bodyLimitBytes, type: () => true });
  // The usual delivery (a declared length within the limit, checked by checkWebhookHead, and no
  // content coding) is read straight off the request: express.raw's general path (charset, type,
  // inflation, async-hook bound callbacks) cost about 4% of the bridge's CPU under load. Chunked
  // and compressed bodies still go through express.raw, with its limits and errors.
  const rawBody = (req: Request, res: Response, next: NextFunction) => {
    const declared = req.headers['content-length'];
    const coding = req.headers['content-encoding'];
    if (declared === undefined || (coding !== undefined && coding.toLowerCase() !== 'identity')) {
      parseBody(req, res, next);
      return;
    }
    readDeclaredBody(req, Number(declared), (error, body) => {
      if (error) {
        next(error);
        return;
      }
      req.body = body;
      next();
    });
  };
  const receiveBody = async (req: Request, res: Response) => {
    const raw: unknown = req.body;
    const body = Buffer.isBuffer(raw) ? raw : Buffer.alloc(0);
    const span = tracing ? stateOf.get(req)?.span : undefined;
    const receive = () => receiveWebhookBody(effects, body, new Date());
    finish(req, res, await (tracing && span ? tracing.within(span, receive) : receive()));
  };
  // One handler for the head check, the body and the event (three route layers cost the router
  // about 9 KB of allocations per webhook); errors go to the JSON error handler below as before.
  app.all(config.path, (req: Request, res: Response, next: NextFunction) => {
    const state: RequestState = { started: process.hrtime.bigint() };
    if (tracing) {
      state.span = tracing.webhook({ method: req.method, path: config.path, headers: req.headers });
    }
    stateOf.set(req, state);
    const rejection = checkWebhookHead(req, { verify, bodyLimitBytes: config.bodyLimitBytes });
    if (rejection) {
      // Leave the unread body alone; the connection is closed after the answer (see below).
      if (rejection.status !== 405) res.set('connection', 'close');
      finish(req, res, { reply: rejection });
      return;
    }
    rawBody(req, res, (error?: unknown) => {
      if (error) {
        next(error);
        return;
      }
      receiveBody(req, res).catch(next);
    });
  });

  options.routes?.(app);

  app.use((req: Request, res: Response) => {
    res
      .status(404)
      .set('content-type', JSON_TYPE)
      .send(
        JSON.stringify({
          success: false,
          error: `nothing at ${req.method} ${req.path}; webhooks are POSTed to ${config.path}`,
        }),
      );
  });

  // Express's default error handler answers HTML with a stack trace; this one answers JSON only.
  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    const reply = replyForError(error, config.bodyLimitBytes);
    if (res.headersSent) {
      req.socket.destroy();
      return;
    }
    if (stateOf.has(req)) {
      finish(req, res, { reply, error });
      return;
    }
    if (reply.status >= 500) log.error({ err: error, path: req.path }, 'request failed');
    send(res, reply);
  });

  const servers = new Set<Server>();
  let closing: Promise<void> | undefined;

  const stopServer = (server: Server) =>
    new Promise<void>((resolve) => {
      if (!server.listening) {
        resolve();
        return;
      }
      // Give in-flight webhooks a moment to be answered, then cut keep-alive stragglers.
      const force = setTimeout(() => server.closeAllConnections(), 2_000);
      force.unref();
      server.close(() => {
        clearTimeout(force);
        resolve();
      });
      server.closeIdleConnections();
    });

  return {
    app,
    path: config.path,
    async listen(port = 0, host = '127.0.0.1') {
      // Take traffic once Redis is connected, so the first deliveries after a start are not
      // answered 503 while the connection is still being made. Start anyway if Redis stays away:
      // webhooks are then answered 503 (and retried) and /readyz says why.
      await producer.connected(Math.max(2_000, config.enqueueTimeoutMs)).catch(() => {
        log.warn('listening although Redis is not connected yet; webhooks are answered 503 until it is');
      });
      // No Host header is required: the receiver does not use it, and Node's refusal of a request
      // without one is an empty 400, not JSON (test/hostile).
      const server = createServer({ requireHostHeader: false }, app);
      // Bound slow senders (slowloris): headers within 10 s, the whole request within 30 s.
      server.headersTimeout = 10_000;
      server.requestTimeout = 30_000;
      // Requests the HTTP parser refuses get a JSON answer too (answer-client-error.ts).
      server.on('clientError', (error: Error & { code?: string }, socket) => {
        const reply = answerClientError(error, socket);
        if (log.isLevelEnabled('debug')) {
          log.debug(
            { code: error.code ?? null, status: reply?.status ?? null },
            'request refused by the HTTP parser',
          );
        }
      });
      // `Expect:` other than 100-continue: Node answers an empty 417 unless told otherwise.
      server.on('checkExpectation', (_req, res) => {
        res.writeHead(EXPECTATION_FAILED.status, {
          'content-type': JSON_TYPE,
          'content-length': Buffer.byteLength(EXPECTATION_FAILED.body),
          'x-convo-bridge-outcome': EXPECTATION_FAILED.outcome,
          connection: 'close',
        });
        res.end(EXPECTATION_FAILED.body);
      });
      servers.add(server);
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          const address = server.address() as AddressInfo;
          const shownHost = host.includes(':') ? `[${host}]` : host;
          resolve({
            url: `http://${shownHost}:${address.port}`,
            port: address.port,
            close: async () => {
              servers.delete(server);
              await stopServer(server);
            },
          });
        });
      });
    },
    isReady: () => producer.isConnected() && closing === undefined,
    close() {
      closing ??= (async () => {
        await Promise.all([...servers].map(stopServer));
        servers.clear();
        await producer.close();
      })();
      return closing;
    },
  };
}

/** Ends a webhook's span with what the receiver made of it. */
function endWebhookSpan(span: TraceSpan, outcome: ReceiveOutcome): void {
  const { reply, event } = outcome;
  span.annotate({
    outcome: reply.outcome,
    statusCode: reply.status,
    ...(event
      ? {
          conversationId: event.conversationId,
          eventKey: event.key,
          eventKind: event.kind,
          channel: event.channel.engine,
          channelId: event.channel.id,
        }
      : outcome.problem?.conversationId
        ? { conversationId: outcome.problem.conversationId }
        : {}),
  });
  if (outcome.error !== undefined) span.fail(outcome.error);
  else if (reply.status >= 500) span.annotate({ errorType: String(reply.status) });
  span.end();
}

/** A body reader's failure, typed as raw-body types its own (replyForError reads `type`). */
class BodyReadError extends Error {
  constructor(
    readonly type: 'request.aborted' | 'request.size.invalid',
    message: string,
  ) {
    super(message);
    this.name = 'BodyReadError';
  }
}

/**
 * Reads a body of a declared length (Node's parser frames it: no more than that arrives). Calls
 * back once: with the bytes, or with a BodyReadError when the client went away first.
 */
function readDeclaredBody(
  req: Request,
  length: number,
  done: (error: BodyReadError | undefined, body?: Buffer) => void,
): void {
  const chunks: Buffer[] = [];
  let received = 0;
  let settled = false;
  const settle = (error: BodyReadError | undefined, body?: Buffer) => {
    if (settled) return;
    settled = true;
    done(error, body);
  };
  req.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    received += chunk.length;
  });
  req.once('end', () => {
    if (received !== length) {
      settle(new BodyReadError('request.size.invalid', 'request size did not match content length'));
      return;
    }
    settle(undefined, chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, received));
  });
  req.once('error', () => settle(new BodyReadError('request.aborted', 'request aborted')));
  req.once('close', () => {
    if (!req.complete) settle(new BodyReadError('request.aborted', 'request aborted'));
  });
}

/** Errors of the body reader (raw-body via express.raw) and of Express itself, as JSON answers. */
function replyForError(error: unknown, limit: number): WebhookReply {
  const fields = (typeof error === 'object' && error !== null ? error : {}) as {
    type?: unknown;
    status?: unknown;
  };
  switch (fields.type) {
    case 'entity.too.large':
      return payloadTooLarge(limit);
    case 'encoding.unsupported':
      return unsupportedMediaType(
        'the Content-Encoding is not supported; send the body as identity, gzip, deflate or br',
      );
    case 'request.aborted':
      return badRequest('the request was aborted before the body was complete');
    case 'request.size.invalid':
      return badRequest('the body is shorter or longer than its Content-Length');
  }
  const status = typeof fields.status === 'number' ? fields.status : 500;
  if (status >= 400 && status < 500) return failure(status, 'bad_request', 'the request could not be read');
  return REPLIES.internal;
}
