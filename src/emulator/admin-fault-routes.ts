import type { Request, Router } from 'express';
import { adminAction, namesEveryBusiness, param, readAdminBody, selectedAdmin } from './admin-http.js';
import { AuthStormBody, ReseedBody } from './admin-requests.js';
import type { EmulatorAdmin } from './emulator-admin.js';
import type { EmulatorBusinesses } from './emulator-businesses.js';
import { FaultSpecSchema } from './faults.js';

/**
 * The admin API's faults: injected failures and latency, the auth storm, the fault RNG's seed.
 * Each acts on the business the request names (the first by default); `?business=*` on every
 * business: a fault added so fires on any business's requests, after that business's own.
 */
export function registerFaultRoutes(router: Router, businesses: EmulatorBusinesses): void {
  const admin = (req: Request): EmulatorAdmin => selectedAdmin(businesses, req);
  const every = namesEveryBusiness;
  router.get(
    '/faults',
    adminAction((req) =>
      every(req)
        ? { faults: businesses.faults(), authStorm: businesses.authStorm }
        : { faults: admin(req).faults(), authStorm: admin(req).authStorm },
    ),
  );
  router.post(
    '/faults',
    adminAction((req) => {
      const spec = readAdminBody(FaultSpecSchema, req);
      return every(req) ? businesses.addFault(spec) : admin(req).addFault(spec);
    }),
  );
  router.delete(
    '/faults',
    adminAction((req) => {
      if (every(req)) businesses.clearFaults();
      else admin(req).clearFaults();
      return { faults: [] };
    }),
  );
  router.delete(
    '/faults/:id',
    adminAction((req) => {
      if (every(req)) {
        businesses.removeFault(param(req, 'id'));
        return { faults: businesses.faults() };
      }
      admin(req).removeFault(param(req, 'id'));
      return { faults: admin(req).faults() };
    }),
  );
  router.put(
    '/auth-storm',
    adminAction((req) => {
      const { active } = readAdminBody(AuthStormBody, req);
      if (every(req)) {
        businesses.setAuthStorm(active);
        return { authStorm: businesses.authStorm };
      }
      admin(req).setAuthStorm(active);
      return { authStorm: admin(req).authStorm };
    }),
  );
  router.put(
    '/random-seed',
    adminAction((req) => {
      const { seed } = readAdminBody(ReseedBody, req);
      if (every(req)) businesses.reseed(seed);
      else admin(req).reseed(seed);
      return { seed };
    }),
  );
}
