import type { Queue } from 'bullmq';
import type { Express } from 'express';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { AdminServer } from '../admin/admin-server.js';
import { type AdminSurface, createAdminSurface, QUEUE_DASHBOARD_PATH } from '../admin/admin-surface.js';
import type { ApiDeps } from '../api/api-deps.js';
import type { AdminSettings } from '../config/config-schema.js';

/** The admin surface of a bridge: mounted on the receiver's app, or listening on its own address. */
export interface BridgeAdmin {
  /** Mounts the surface on the receiver's app; a no-op when it has an address of its own. */
  routes(app: Express): void;
  /** Starts the surface's own server (`admin.listen`); null when it shares the receiver's port. */
  listen(): Promise<AdminServer | null>;
  /** Logs the failed logins counted and not logged yet. */
  flush(): void;
}

/**
 * The admin surface with bull-board mounted, or undefined when `admin.password` is unset (nothing
 * mounted, so a 404: an open queue dashboard would let anyone retry or delete jobs). bull-board and
 * its UI assets are loaded only then: they are most of an idle bridge's memory otherwise.
 */
export async function buildAdmin(deps: {
  admin: AdminSettings;
  queues: Queue[];
  log: Logger;
  registry: Registry;
  repeatLogIntervalMs: number;
  /** The operator API's parts (the API is served at /api/v1 beside bull-board). */
  api: Omit<ApiDeps, 'log' | 'linkSecret'>;
}): Promise<BridgeAdmin | undefined> {
  const { admin, log } = deps;
  const { password } = admin;
  if (password === undefined) return undefined;
  const { queueDashboard, QUEUE_DASHBOARD_CSP } = await import('../admin/queue-dashboard.js');
  const surface: AdminSurface = createAdminSurface({
    admin: { ...admin, password },
    log,
    registry: deps.registry,
    repeatLogIntervalMs: deps.repeatLogIntervalMs,
  });
  surface.mount(QUEUE_DASHBOARD_PATH, queueDashboard(deps.queues), { csp: QUEUE_DASHBOARD_CSP });
  const { mountOperatorApi } = await import('../api/operator-api.js');
  mountOperatorApi(surface, { ...deps.api, log, linkSecret: admin.linkSecret });
  const { listen } = admin;
  return {
    routes(app) {
      if (listen !== null) return;
      app.use(surface.router);
      log.info(
        `admin surface on the receiver's port: bull-board at ${QUEUE_DASHBOARD_PATH}, the operator API at /api/v1 (basic auth, console links)`,
      );
    },
    async listen() {
      if (listen === null) return null;
      const { listenAdmin } = await import('../admin/admin-server.js');
      const server = await listenAdmin(surface, listen, log);
      log.info(
        { url: `${server.url}${QUEUE_DASHBOARD_PATH}` },
        'admin surface listening apart from the webhooks (admin.listen): bull-board and the operator API (basic auth, console links)',
      );
      return server;
    },
    flush: () => surface.flush(),
  };
}
