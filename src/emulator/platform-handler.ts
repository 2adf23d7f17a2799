import type { IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Request, Response } from 'express';
import type { ApiReply } from './api-envelopes.js';
import type { EmulatorAdmin } from './emulator-admin.js';
import type { EmulatorBusinesses } from './emulator-businesses.js';
import {
  executePlatformOperation,
  faultReply,
  type GateResult,
  gatePlatformRequest,
  type PlatformRequest,
} from './platform-api.js';
import { matchPlatformRoute } from './platform-routes.js';

const BODY_LIMIT_BYTES = 1024 * 1024;

interface BodyRead {
  readonly body: unknown;
  readonly problem: string | null;
}

async function readJsonBody(req: IncomingMessage): Promise<BodyRead> {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > BODY_LIMIT_BYTES) tooLarge = true;
    else chunks.push(buffer);
  }
  if (tooLarge) return { body: null, problem: `body larger than ${BODY_LIMIT_BYTES} bytes` };
  const type = req.headers['content-type'] ?? '';
  // Spec: every POST carries Content-Type: application/json.
  if (!/^application\/json\b/i.test(type))
    return { body: null, problem: 'Content-Type is not application/json' };
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return { body: JSON.parse(text) as unknown, problem: null };
  } catch {
    return { body: null, problem: 'body is not valid JSON' };
  }
}

function send(res: Response, reply: ApiReply): void {
  res.status(reply.httpStatus);
  for (const [name, value] of Object.entries(reply.headers)) res.setHeader(name, value);
  res.json(reply.body);
}

/**
 * The Express adapter of the platform API: finds the business the request is for, reads the body,
 * applies that business's injected faults around the pure operation (platform-api.ts), writes the
 * reply or drops the socket, and records the request in that business's log. Nothing is logged to
 * the console: at benchmark rates that alone would be the bottleneck.
 */
export function createPlatformHandler(businesses: EmulatorBusinesses, closing: AbortSignal) {
  const wait = async (ms: number) => {
    if (ms <= 0) return;
    await sleep(ms, undefined, { signal: closing }).catch(() => undefined);
  };

  return async (req: Request, res: Response): Promise<void> => {
    const started = performance.now();
    const at = new Date().toISOString();
    const route = matchPlatformRoute(req.method, req.path);
    // Unknown routes name no operation and need no business: the first one logs them, as ever.
    const admin: EmulatorAdmin = route
      ? businesses.forRequest(req.headers, route.endpoint)
      : businesses.first;
    const context = admin.platformContext();
    const record = (fields: {
      authenticated: boolean;
      auth: string;
      credential?: GateResult['credential'];
      reply: ApiReply | null;
      faults: readonly string[];
      body: unknown;
    }) =>
      admin.recordRequest({
        at,
        method: req.method,
        path: req.originalUrl,
        endpoint: route?.endpoint ?? null,
        authenticated: fields.authenticated,
        auth: fields.auth,
        credential: fields.credential ?? null,
        httpStatus: fields.reply?.httpStatus ?? null,
        rc: fields.reply?.rc ?? null,
        errorMsg: fields.reply?.errorMsg ?? null,
        callerGone: req.socket.destroyed,
        faults: fields.faults,
        body: fields.body,
        durationMs: Math.round((performance.now() - started) * 10) / 10,
      });

    if (!route) {
      // Not an operation of the interface: a plain 404 in both forms (no API error envelope applies).
      const reply: ApiReply = {
        httpStatus: 404,
        body: { status: 0, rc: 404, error_msg: `unknown operation: ${req.method} ${req.path}` },
        headers: {},
        rc: 404,
        errorMsg: 'unknown operation',
      };
      send(res, reply);
      record({ authenticated: false, auth: 'not checked', reply, faults: [], body: null });
      return;
    }

    const { body, problem } =
      req.method === 'POST' ? await readJsonBody(req) : { body: null, problem: null as string | null };
    const request: PlatformRequest = {
      route,
      query: req.query as Record<string, unknown>,
      headers: req.headers,
      body,
      bodyProblem: problem,
      remoteAddress: req.socket.remoteAddress ?? 'unknown',
    };

    const plan = businesses.decideFaults(admin, route.endpoint);
    const fail = (
      authenticated: boolean,
      auth: string,
      credential: GateResult['credential'] = null,
    ): void => {
      const failure = plan.failure;
      if (!failure) return;
      const reply = faultReply(context.form, route.endpoint, failure);
      record({ authenticated, auth, credential, reply: reply ?? null, faults: plan.fired, body });
      if (reply) send(res, reply);
      else req.socket.destroy();
    };

    await wait(plan.latencyBeforeMs);
    if (plan.failure?.mode === 'before') {
      fail(false, 'not checked');
      return;
    }
    const gate = gatePlatformRequest(context, request);
    const reply = gate.reject ?? executePlatformOperation(context, request);
    await wait(plan.latencyAfterMs);
    if (plan.failure?.mode === 'after') {
      fail(gate.authenticated, gate.auth, gate.credential);
      return;
    }
    // Recorded before the answer is written, so `callerGone` says whether the caller was still there.
    record({
      authenticated: gate.authenticated,
      auth: gate.auth,
      credential: gate.credential,
      reply,
      faults: plan.fired,
      body,
    });
    send(res, reply);
  };
}
