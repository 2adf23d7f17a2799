import { z } from 'zod';
import { EmulatorError } from './emulator-error.js';
import { ENDPOINT_NAMES, type EndpointName } from './platform-routes.js';
import { createSeededRandom } from './seeded-random.js';

/**
 * Fault injection, switchable at run time. Each fault applies to one endpoint or to `all` (every
 * platform endpoint except the health check, so harnesses can still wait on /health), fires on a
 * `fraction` of requests drawn from a seeded RNG, and either fails without acting (`before`) or acts
 * and then fails (`after`: "took the request, then 5xx / timed out").
 */
const common = {
  endpoint: z.enum(['all', ...ENDPOINT_NAMES]).default('all'),
  /** Share of matching requests the fault fires on, 0..1. */
  fraction: z.number().min(0).max(1).default(1),
  mode: z.enum(['before', 'after']).default('before'),
  /** Remove the fault after it fired this many times. */
  times: z.number().int().positive().optional(),
};
/** `form`: the form's error delivery (current: HTTP 200 + body); `http`: the real HTTP status in either form. */
const delivery = z.enum(['form', 'http']).default('form');

export const FaultSpecSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('error'),
    status: z.number().int().min(500).max(599).default(500),
    delivery,
    ...common,
  }),
  z.strictObject({
    type: z.literal('rate_limit'),
    retryAfterSeconds: z.number().int().min(0).max(86_400).default(1),
    delivery,
    ...common,
    // Spec, Errors: "429 | Rate limit exceeded. Body text says there are too many requests and to
    // try later": a 429 is a refusal, so it never comes after acting. A client may (and ours does)
    // repeat a send after a 429; an `after` 429 would make that a duplicate the spec rules out
    // (conformance finding).
    mode: z
      .literal('before', {
        error:
          "a rate_limit fault answers before acting (a 429 means 'try later'); use mode 'after' with error, latency or drop",
      })
      .default('before'),
  }),
  z.strictObject({ type: z.literal('latency'), latencyMs: z.number().int().min(0).max(600_000), ...common }),
  /** The socket is destroyed without an answer. */
  z.strictObject({ type: z.literal('drop'), ...common }),
]);
export type FaultSpec = z.infer<typeof FaultSpecSchema>;
export type FaultSpecInput = z.input<typeof FaultSpecSchema>;

export type ActiveFault = FaultSpec & { readonly id: string; fired: number };
export type FailureFault = Extract<ActiveFault, { type: 'error' | 'rate_limit' | 'drop' }>;

export interface FaultPlan {
  readonly latencyBeforeMs: number;
  readonly latencyAfterMs: number;
  /** The failure to answer with, if one fired. */
  readonly failure: FailureFault | undefined;
  /** Ids of the faults that fired, for the request log. */
  readonly fired: readonly string[];
}

const NO_FAULT: FaultPlan = { latencyBeforeMs: 0, latencyAfterMs: 0, failure: undefined, fired: [] };

export interface FaultRegistryOptions {
  /** Fault ids are `<idPrefix>-<n>` (default `fault`). */
  readonly idPrefix?: string;
  /** Where the faults are listed, for the error about an unknown id (default `GET /_emulator/faults`). */
  readonly listedAt?: string;
}

export class FaultRegistry {
  private faults: ActiveFault[] = [];
  private random: () => number;
  private counter = 0;
  private seedValue: number;
  private readonly idPrefix: string;
  private readonly listedAt: string;

  constructor(seed: number, options: FaultRegistryOptions = {}) {
    this.seedValue = seed;
    this.random = createSeededRandom(seed);
    this.idPrefix = options.idPrefix ?? 'fault';
    this.listedAt = options.listedAt ?? 'GET /_emulator/faults';
  }

  get seed(): number {
    return this.seedValue;
  }

  /** Restarts the RNG, so the same request sequence sees the same faults again. */
  reseed(seed: number): void {
    this.seedValue = seed;
    this.random = createSeededRandom(seed);
  }

  add(input: unknown): ActiveFault {
    const parsed = FaultSpecSchema.safeParse(input);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
      throw new EmulatorError(
        'EMULATOR_BAD_REQUEST',
        `invalid fault: ${where}${issue?.message ?? 'invalid'} (type is one of error, rate_limit, latency, drop)`,
        { cause: parsed.error },
      );
    }
    this.counter += 1;
    const fault: ActiveFault = { ...parsed.data, id: `${this.idPrefix}-${this.counter}`, fired: 0 };
    this.faults.push(fault);
    return fault;
  }

  remove(id: string): void {
    const before = this.faults.length;
    this.faults = this.faults.filter((fault) => fault.id !== id);
    if (this.faults.length === before) {
      throw new EmulatorError(
        'EMULATOR_NOT_FOUND',
        `fault ${JSON.stringify(id)} does not exist: list them with ${this.listedAt}`,
      );
    }
  }

  clear(): void {
    this.faults = [];
  }

  list(): ActiveFault[] {
    return this.faults.map((fault) => ({ ...fault }));
  }

  /**
   * Decides the faults of one request. Every fault that matches the endpoint draws exactly one
   * number, so a given seed and request sequence always gives the same plan. With `failureTaken`
   * (another registry's failure already answers this request), failures here neither answer nor
   * count as fired, as a second failure of one registry does not.
   */
  decide(endpoint: EndpointName, failureTaken = false): FaultPlan {
    if (this.faults.length === 0) return NO_FAULT;
    let latencyBeforeMs = 0;
    let latencyAfterMs = 0;
    let failure: FailureFault | undefined;
    const fired: string[] = [];
    for (const fault of this.faults) {
      if (fault.endpoint !== endpoint && !(fault.endpoint === 'all' && endpoint !== 'health')) continue;
      const draw = this.random();
      if (draw >= fault.fraction) continue;
      if (fault.type === 'latency') {
        if (fault.mode === 'before') latencyBeforeMs += fault.latencyMs;
        else latencyAfterMs += fault.latencyMs;
      } else if (failure === undefined && !failureTaken) {
        failure = fault;
      } else {
        continue;
      }
      fault.fired += 1;
      fired.push(fault.id);
    }
    if (fired.length > 0) {
      this.faults = this.faults.filter((fault) => fault.times === undefined || fault.fired < fault.times);
    }
    return { latencyBeforeMs, latencyAfterMs, failure, fired };
  }
}

/**
 * One request's plan from two registries (a business's own faults, then those set for every
 * business): latencies add up, the first failure wins, both lists of fired faults are kept.
 */
export function mergeFaultPlans(first: FaultPlan, second: FaultPlan): FaultPlan {
  if (second.fired.length === 0) return first;
  if (first.fired.length === 0) return second;
  return {
    latencyBeforeMs: first.latencyBeforeMs + second.latencyBeforeMs,
    latencyAfterMs: first.latencyAfterMs + second.latencyAfterMs,
    failure: first.failure ?? second.failure,
    fired: [...first.fired, ...second.fired],
  };
}
