import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { describeError } from '../base/errors.js';
import { DemoError } from './demo-error.js';

/**
 * A small CRM stand-in for the demo: it takes the bridge's forwards (src/forward/forward-event.ts),
 * verifies their Standard Webhooks signature, and records every delivery. Like a careful CRM it
 * dedupes on `webhook-id`, so a forward retried after a lost answer counts once. It can be told
 * to answer the next forwards with 503 to show the bridge's retry.
 */
export interface CrmDelivery {
  /** `webhook-id` header (stable per event and action). */
  webhookId: string;
  /** The signature matched the shared secret. */
  verified: boolean;
  /** What the sink answered. */
  status: number;
  /** A delivery of a webhook-id already accepted before. */
  duplicate: boolean;
  receivedAt: string;
  conversationId: string | null;
  rule: string | null;
  /** The action id the forward carries, e.g. `escalate-complaints#2`. */
  action: string | null;
  /** Why the signature check failed. */
  error: string | null;
}

export interface CrmSink {
  /** Where to forward, e.g. `http://127.0.0.1:39811/hooks`. */
  readonly url: string;
  /** Every delivery, in arrival order. */
  deliveries(): CrmDelivery[];
  /** The next `count` correctly signed forwards are answered 503 (not recorded as accepted). */
  failNext(count: number): void;
  close(): Promise<void>;
}

const BODY_LIMIT_BYTES = 1024 * 1024;
/** Most deliveries kept (the demo sends a handful; a misbehaving loop must not grow memory). */
const MAX_DELIVERIES = 10_000;

function readBody(req: IncomingMessage): Promise<string | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > BODY_LIMIT_BYTES) {
        resolve(null);
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => resolve(null));
  });
}

function headerRecord(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === 'string') out[name] = value;
    else if (Array.isArray(value)) out[name] = value.join(', ');
  }
  return out;
}

function describeForward(body: unknown): Pick<CrmDelivery, 'conversationId' | 'rule' | 'action'> {
  const record = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const event =
    typeof record.event === 'object' && record.event !== null
      ? (record.event as Record<string, unknown>)
      : {};
  const text = (value: unknown) => (typeof value === 'string' ? value : null);
  return { conversationId: text(event.conversationId), rule: text(record.rule), action: text(record.action) };
}

export async function startCrmSink(options: { secret: string; port?: number }): Promise<CrmSink> {
  const verifier = new Webhook(options.secret, { format: 'raw' });
  const deliveries: CrmDelivery[] = [];
  const accepted = new Set<string>();
  let failures = 0;

  const server: Server = createServer((req, res) => {
    const answer = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'POST' || req.url !== '/hooks') {
      answer(404, { error: 'POST /hooks' });
      return;
    }
    void readBody(req).then((text) => {
      if (text === null) {
        if (!res.writableEnded && !res.destroyed) answer(413, { error: 'body too large' });
        return;
      }
      const headers = headerRecord(req);
      const webhookId = headers['webhook-id'] ?? '';
      let parsed: unknown = null;
      let verified = false;
      let error: string | null = null;
      try {
        parsed = verifier.verify(text, headers);
        verified = true;
      } catch (failure) {
        error = describeError(failure);
      }
      const record = (status: number, duplicate: boolean) => {
        if (deliveries.length < MAX_DELIVERIES) {
          deliveries.push({
            webhookId,
            verified,
            status,
            duplicate,
            receivedAt: new Date().toISOString(),
            ...describeForward(parsed),
            error,
          });
        }
      };
      if (!verified) {
        record(401, false);
        answer(401, { error: `signature check failed: ${error ?? 'unknown'}` });
        return;
      }
      if (failures > 0) {
        failures -= 1;
        record(503, false);
        answer(503, { error: 'the CRM is busy (injected by the demo)' });
        return;
      }
      const duplicate = accepted.has(webhookId);
      accepted.add(webhookId);
      record(200, duplicate);
      answer(200, { ok: true, duplicate });
    });
  });

  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', (error) =>
      reject(
        new DemoError('DEMO_START_FAILED', `the CRM sink cannot listen: ${describeError(error)}`, {
          cause: error,
        }),
      ),
    );
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });

  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    deliveries: () => deliveries.map((d) => ({ ...d })),
    failNext(count) {
      failures = count;
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
