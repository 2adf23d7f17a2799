import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type NextFunction, type Request, type Response } from 'express';
import { describeError } from '../base/errors.js';
import { createAdminRouter } from './admin-router.js';
import type { EmulatorAdmin } from './emulator-admin.js';
import { EmulatorBusinesses } from './emulator-businesses.js';
import { EmulatorError } from './emulator-error.js';
import { type EmulatorOptions, type ResolvedBusiness, resolveEmulatorOptions } from './emulator-options.js';
import { INBOX_PATH } from './inbox-page.js';
import { createPlatformHandler } from './platform-handler.js';
import { loadSeedFile, parseSeedData, type SeedData } from './seed-data.js';

export interface EmulatorHandle {
  /** Base URL of the platform API, e.g. `http://127.0.0.1:41234` (the spec's {base_url}). */
  readonly url: string;
  readonly port: number;
  /** The inbox page (the spec's {dashboard_url}, emulated). */
  readonly inboxUrl: string;
  /** Base URL of the admin API (`<url>/_emulator`). */
  readonly adminUrl: string;
  readonly form: 'current' | 'earlier';
  /**
   * In-process access to everything the admin API does (tests), for the first business;
   * `admin.business(id)` for another.
   */
  readonly admin: EmulatorAdmin;
  /** Every business the emulator hosts, and what acts on all of them (faults, auth storm, reset). */
  readonly businesses: EmulatorBusinesses;
  /** Stops listening, drops open connections, stops timers and webhook deliveries. Idempotent. */
  close(): Promise<void>;
}

/** A business's seed; errors name its options by their place (`business.where`). */
async function resolveSeed(business: ResolvedBusiness): Promise<SeedData | undefined> {
  const { seedData, seedFile, where } = business;
  if (seedData !== undefined && seedFile !== undefined) {
    throw new EmulatorError(
      'EMULATOR_OPTIONS_INVALID',
      `give either ${where}seedData or ${where}seedFile, not both`,
    );
  }
  if (seedFile !== undefined) return loadSeedFile(seedFile);
  if (seedData !== undefined) return parseSeedData(seedData, `${where}seedData`);
  return undefined;
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      reject(
        new EmulatorError(
          'EMULATOR_LISTEN_FAILED',
          `the emulator cannot listen on ${host}:${port}: ${error.code ?? describeError(error)}` +
            (error.code === 'EADDRINUSE'
              ? ' (the port is taken: pick another with --port, or 0 for any free port)'
              : ''),
          { cause: error },
        ),
      );
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/**
 * Starts the platform emulator: the platform API (both interface forms), webhooks to a receiver,
 * the admin API under /_emulator/ and the inbox page, for one business or several (each with its
 * own credentials, webhooks and conversations). Listens on 127.0.0.1 (port 0 = any free port).
 */
export async function startEmulator(options: EmulatorOptions): Promise<EmulatorHandle> {
  const resolved = resolveEmulatorOptions(options);
  const seeds = await Promise.all(resolved.businesses.map((business) => resolveSeed(business)));
  const businesses = new EmulatorBusinesses(resolved, seeds);
  const admin = businesses.first;
  const closing = new AbortController();

  const app = express();
  app.disable('x-powered-by');
  // History answers change with every message; no ETag/304 round trips.
  app.set('etag', false);
  app.use('/_emulator', createAdminRouter(businesses));
  app.use(createPlatformHandler(businesses, closing.signal));
  // Last resort: a bug must not take the process down or hang the client.
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if (res.headersSent) {
      res.end();
      return;
    }
    res.status(500).json({ status: 0, rc: 500, error_msg: `emulator error: ${describeError(error)}` });
  });

  const server = createServer(app);
  // Benchmarks reuse connections; keep them longer than typical client idle timeouts.
  server.keepAliveTimeout = 65_000;
  let port: number;
  try {
    port = await listen(server, resolved.port, resolved.host);
  } catch (error) {
    await businesses.shutdown();
    throw error;
  }
  const hostInUrl = resolved.host.includes(':') ? `[${resolved.host}]` : resolved.host;
  const url = `http://${hostInUrl}:${port}`;

  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= (async () => {
      closing.abort();
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await businesses.shutdown();
      await stopped;
    })();
    return closed;
  };

  return {
    url,
    port,
    inboxUrl: `${url}${INBOX_PATH}`,
    adminUrl: `${url}/_emulator`,
    form: resolved.form,
    admin,
    businesses,
    close,
  };
}
