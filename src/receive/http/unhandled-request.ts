import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { replyForError } from '../webhook-reply.js';
import type { AnswerWebhook, RequestStates } from './answer-webhook.js';
import { JSON_TYPE, sendReply } from './send-reply.js';

/**
 * A JSON 404 for any other path, naming where webhooks go; with several businesses (null), it
 * names none of their paths (they would tell a stranger which businesses the bridge serves).
 */
export function createNotFoundHandler(pathNow: () => string | null) {
  return (req: Request, res: Response) => {
    const webhookPath = pathNow();
    const where =
      webhookPath === null
        ? 'no business of this bridge receives webhooks at this path'
        : `webhooks are POSTed to ${webhookPath}`;
    res
      .status(404)
      .set('content-type', JSON_TYPE)
      .send(JSON.stringify({ success: false, error: `nothing at ${req.method} ${req.path}; ${where}` }));
  };
}

/**
 * Express's default error handler answers HTML with a stack trace; this one answers JSON only. A
 * webhook's error is answered, counted and logged as any webhook answer; another route's is logged
 * when it is the receiver's fault (5xx).
 */
export function createErrorHandler(deps: {
  bodyLimitBytes: number;
  states: RequestStates;
  answer: AnswerWebhook;
  log: Logger;
}) {
  const { bodyLimitBytes, states, answer, log } = deps;
  return (error: unknown, req: Request, res: Response, _next: NextFunction) => {
    const reply = replyForError(error, bodyLimitBytes);
    if (res.headersSent) {
      req.socket.destroy();
      return;
    }
    if (states.has(req)) {
      answer(req, res, { reply, error });
      return;
    }
    if (reply.status >= 500) log.error({ err: error, path: req.path }, 'request failed');
    sendReply(res, reply);
  };
}
