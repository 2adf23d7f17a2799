import type { Router } from 'express';
import { adminAction, param, readAdminBody } from './admin-http.js';
import { AuthStormBody, ReseedBody } from './admin-requests.js';
import type { EmulatorAdmin } from './emulator-admin.js';
import { FaultSpecSchema } from './faults.js';

/** The admin API's faults: injected failures and latency, the auth storm, the fault RNG's seed. */
export function registerFaultRoutes(router: Router, admin: EmulatorAdmin): void {
  router.get(
    '/faults',
    adminAction(() => ({ faults: admin.faults(), authStorm: admin.authStorm })),
  );
  router.post(
    '/faults',
    adminAction((req) => admin.addFault(readAdminBody(FaultSpecSchema, req))),
  );
  router.delete(
    '/faults',
    adminAction(() => {
      admin.clearFaults();
      return { faults: [] };
    }),
  );
  router.delete(
    '/faults/:id',
    adminAction((req) => {
      admin.removeFault(param(req, 'id'));
      return { faults: admin.faults() };
    }),
  );
  router.put(
    '/auth-storm',
    adminAction((req) => {
      admin.setAuthStorm(readAdminBody(AuthStormBody, req).active);
      return { authStorm: admin.authStorm };
    }),
  );
  router.put(
    '/random-seed',
    adminAction((req) => {
      const { seed } = readAdminBody(ReseedBody, req);
      admin.reseed(seed);
      return { seed };
    }),
  );
}
