import type { HeaderBag } from './authenticate-request.js';
import { EmulatorAdmin } from './emulator-admin.js';
import { EmulatorError } from './emulator-error.js';
import type { ResolvedEmulatorOptions } from './emulator-options.js';
import {
  type ActiveFault,
  type FaultPlan,
  FaultRegistry,
  type FaultSpecInput,
  mergeFaultPlans,
} from './faults.js';
import { identifyBusiness } from './identify-business.js';
import type { EndpointName } from './platform-routes.js';
import type { SeedData } from './seed-data.js';

/** A business as `GET /_emulator/businesses` lists it (never its secrets). */
export interface BusinessListing {
  readonly id: string;
  readonly name: string;
  /** The admin API's and the inbox page's business when none is named. */
  readonly default: boolean;
  readonly webhook: { url: string; secretSet: boolean } | null;
  readonly handoverWebhook: { url: string; secretSet: boolean } | null;
  readonly apiFeature: boolean;
  readonly authStorm: boolean;
  readonly conversations: number;
  readonly faults: number;
}

/**
 * The businesses one emulator hosts, each with its own `EmulatorAdmin` (state,
 * webhooks, faults, logs), plus what concerns them all: which business a platform request is for,
 * faults set for every business, and switches that act on every business at once.
 */
export class EmulatorBusinesses {
  private readonly admins: readonly EmulatorAdmin[];
  private readonly byId: ReadonlyMap<string, EmulatorAdmin>;
  /** Faults set for every business (admin API `?business=*`), drawn after a business's own. */
  private readonly everyBusinessFaults: FaultRegistry;

  constructor(
    private readonly options: ResolvedEmulatorOptions,
    seeds: readonly (SeedData | undefined)[],
  ) {
    const lookup = { get: (id: string) => this.get(id), ids: () => this.ids() };
    this.admins = options.businesses.map(
      (business, index) => new EmulatorAdmin(options, business, seeds[index], lookup),
    );
    this.byId = new Map(this.admins.map((admin) => [admin.businessId, admin]));
    this.everyBusinessFaults = new FaultRegistry(options.seed, {
      idPrefix: 'fault-all',
      listedAt: 'GET /_emulator/faults?business=*',
    });
  }

  /** The first business: the one of `businessId` (or `businesses[0]`), the admin API's default. */
  get first(): EmulatorAdmin {
    return this.admins[0] as EmulatorAdmin;
  }

  list(): readonly EmulatorAdmin[] {
    return this.admins;
  }

  ids(): readonly string[] {
    return this.admins.map((admin) => admin.businessId);
  }

  get(id: string): EmulatorAdmin {
    const admin = this.byId.get(id);
    if (!admin) {
      throw new EmulatorError(
        'EMULATOR_NOT_FOUND',
        `the emulator hosts no business ${JSON.stringify(id)}: use one of ${this.ids().join(', ')} (GET /_emulator/businesses)`,
      );
    }
    return admin;
  }

  listing(): BusinessListing[] {
    return this.admins.map((admin, index) => {
      const summary = admin.summary();
      return {
        id: admin.businessId,
        name: summary.business.name,
        default: index === 0,
        webhook: summary.webhook,
        handoverWebhook: summary.handoverWebhook,
        apiFeature: summary.apiFeature,
        authStorm: summary.authStorm,
        conversations: summary.conversations,
        faults: summary.faults.length,
      };
    });
  }

  // ---- the platform API ----

  /**
   * The business a platform request is for: the one its credentials name (identify-business.ts),
   * or the first when they name none, so that a one-business emulator answers as it always did.
   */
  forRequest(headers: HeaderBag, endpoint: EndpointName): EmulatorAdmin {
    if (this.admins.length === 1) return this.first;
    const index = identifyBusiness(
      this.options.form,
      headers,
      this.admins.map((admin) => admin.businessKey()),
      { allowMerchantHeaders: endpoint === 'history' },
    );
    return this.admins[index ?? 0] ?? this.first;
  }

  /** The faults of one request to `admin`'s business: its own, then those set for every business. */
  decideFaults(admin: EmulatorAdmin, endpoint: EndpointName): FaultPlan {
    const own = admin.decideFaults(endpoint);
    return mergeFaultPlans(own, this.everyBusinessFaults.decide(endpoint, own.failure !== undefined));
  }

  // ---- every business at once (admin API `?business=*`) ----

  /** A fault for every business's requests (ids `fault-all-<n>`). */
  addFault(spec: FaultSpecInput): ActiveFault {
    return this.everyBusinessFaults.add(spec);
  }

  removeFault(id: string): void {
    this.everyBusinessFaults.remove(id);
  }

  /** The faults set for every business (each business's own are listed by its admin). */
  faults(): ActiveFault[] {
    return this.everyBusinessFaults.list();
  }

  /** Every fault off: those set for every business and each business's own. */
  clearFaults(): void {
    this.everyBusinessFaults.clear();
    for (const admin of this.admins) admin.clearFaults();
  }

  setAuthStorm(active: boolean): void {
    for (const admin of this.admins) admin.setAuthStorm(active);
  }

  /** True while every business is in an auth storm. */
  get authStorm(): boolean {
    return this.admins.every((admin) => admin.authStorm);
  }

  setApiFeature(enabled: boolean): void {
    for (const admin of this.admins) admin.setApiFeature(enabled);
  }

  /** Restarts every fault RNG (each business's and the shared one) with `seed`. */
  reseed(seed: number): void {
    for (const admin of this.admins) admin.reseed(seed);
    this.everyBusinessFaults.reseed(seed);
  }

  /** Every business back to its start, and no faults for every business. */
  async reset(options: { empty?: boolean } = {}): Promise<void> {
    this.everyBusinessFaults.clear();
    this.everyBusinessFaults.reseed(this.options.seed);
    await Promise.all(this.admins.map((admin) => admin.reset(options)));
  }

  /** Resolves when no business has a webhook delivery queued or in flight. */
  async deliveriesSettled(): Promise<void> {
    await Promise.all(this.admins.map((admin) => admin.deliveriesSettled()));
  }

  /** @internal Stops every business's timers and deliveries. */
  async shutdown(): Promise<void> {
    await Promise.all(this.admins.map((admin) => admin.shutdown()));
  }
}
