import express, { type NextFunction, type Request, type Response } from 'express';

export type ReadBody = (req: Request, res: Response, next: NextFunction) => void;

/**
 * Reads a webhook's body into `req.body` (a Buffer), within `bodyLimitBytes`. The usual delivery (a
 * declared length within the limit, checked by checkWebhookHead, and no content coding) is read
 * straight off the request: express.raw's general path (charset, type, inflation, async-hook bound
 * callbacks) cost about 4% of the bridge's CPU under load. Chunked and compressed bodies still go
 * through express.raw, with its limits and errors (replyForError answers them). Made once per receiver.
 */
export function createBodyReader(bodyLimitBytes: number): ReadBody {
  const parseBody = express.raw({ limit: bodyLimitBytes, type: () => true });
  return (req: Request, res: Response, next: NextFunction) => {
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
