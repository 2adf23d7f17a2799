/**
 * One server under test for `npm run bench:ingest`, in its own process:
 *   receiver: createReceiver against REDIS_URL (what production runs);
 *   baseline: a bare Express app that parses JSON and answers the same body, no Redis.
 * Prints `LISTENING <url>` once it takes requests; stops on SIGTERM.
 */
import express from 'express';
import { createReceiver } from '../src/receive/create-receiver.js';

const mode = process.argv[2];
const secret = process.env.BENCH_SECRET ?? 'bench-secret-0123456789';

async function main(): Promise<void> {
  if (mode === 'receiver') {
    const receiver = createReceiver({
      secrets: [secret],
      redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      prefix: process.env.BENCH_PREFIX ?? 'bench',
    });
    const { url } = await receiver.listen(0, '127.0.0.1');
    process.stdout.write(`LISTENING ${url}\n`);
    process.once('SIGTERM', () => {
      receiver.close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    });
    return;
  }
  if (mode === 'baseline') {
    const app = express();
    app.disable('x-powered-by');
    app.set('etag', false);
    app.post('/webhooks/platform', express.json({ limit: '1mb' }), (_req, res) => {
      res.status(200).set('content-type', 'application/json; charset=utf-8').send('{"success":true}');
    });
    const server = app.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      process.stdout.write(`LISTENING http://127.0.0.1:${port}\n`);
    });
    process.once('SIGTERM', () => server.close(() => process.exit(0)));
    return;
  }
  throw new Error(`unknown mode ${mode}; use receiver or baseline`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
