import type { NextFunction, Request, Response } from 'express';
import type { BridgeTracing } from '../../observe/trace-context.js';
import { checkWebhookHead, type ReceiveEffects, receiveWebhookBody } from '../receive-webhook.js';
import type { SecretVerifier } from '../verify-secret.js';
import type { AnswerWebhook, RequestState, RequestStates } from './answer-webhook.js';
import type { ReadBody } from './read-webhook-body.js';

export interface WebhookRouteDeps {
  path: string;
  /** The business this path belongs to. */
  business: string;
  bodyLimitBytes: number;
  verify: SecretVerifier;
  effects: ReceiveEffects;
  /** Read once: tracing is installed (or not) before the receiver is built (run-bridge.ts). */
  tracing: BridgeTracing | undefined;
  readBody: ReadBody;
  states: RequestStates;
  answer: AnswerWebhook;
}

/**
 * The Express handler of the webhook path: the head check, the body and the event in one handler
 * (three route layers cost the router about 9 KB of allocations per webhook); errors go to the JSON
 * error handler (unhandled-request.ts) as before. Made once per receiver.
 */
export function createWebhookRoute(deps: WebhookRouteDeps) {
  const { path, business, bodyLimitBytes, verify, effects, tracing, readBody, states, answer } = deps;
  const receiveBody = async (req: Request, res: Response) => {
    const raw: unknown = req.body;
    const body = Buffer.isBuffer(raw) ? raw : Buffer.alloc(0);
    const span = tracing ? states.get(req)?.span : undefined;
    const receive = () => receiveWebhookBody(effects, body, new Date());
    answer(req, res, await (tracing && span ? tracing.within(span, receive) : receive()));
  };
  return (req: Request, res: Response, next: NextFunction) => {
    const state: RequestState = { started: process.hrtime.bigint(), business };
    if (tracing) {
      state.span = tracing.webhook({ method: req.method, path, headers: req.headers });
    }
    states.set(req, state);
    const rejection = checkWebhookHead(req, { verify, bodyLimitBytes });
    if (rejection) {
      // Leave the unread body alone; the connection is closed after the answer (see below).
      if (rejection.status !== 405) res.set('connection', 'close');
      answer(req, res, { reply: rejection });
      return;
    }
    readBody(req, res, (error?: unknown) => {
      if (error) {
        next(error);
        return;
      }
      receiveBody(req, res).catch(next);
    });
  };
}
