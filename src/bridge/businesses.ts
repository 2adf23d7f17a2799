import type { LoadedConfig } from '../config/load-config.js';
import { SINGLE_BUSINESS_ID } from '../events/business-naming.js';
import type { ReceiverBusiness } from '../receive/receiver-options.js';
import { heldFix } from '../worker/businesses/business-table.js';
import { describeHeldCount } from '../worker/businesses/held-jobs.js';
import type { BridgeWorker } from '../worker/create-bridge-worker.js';
import type { BusinessSetup } from './compose-worker.js';

/** The businesses of a loaded config as the bridge is built from them (a config without `businesses:`: one). */
export function businessSetups(loaded: LoadedConfig): readonly BusinessSetup[] {
  return loaded.businesses.map(({ id, naming, config, rules, shadow }) => ({
    id,
    naming,
    config,
    rules,
    ...(shadow ? { shadow } : {}),
  }));
}

/** Where each business's webhooks arrive, with which secrets, and how its events are stored. */
export function receiverBusinesses(businesses: readonly BusinessSetup[]): ReceiverBusiness[] {
  return businesses.map(({ id, naming, config }) => ({
    id,
    path: config.receiver.path,
    secrets: config.receiver.secrets,
    naming,
  }));
}

/**
 * `/readyz`'s word on each business: `ok`, or paused, for how long and why; and what is held for a
 * business the config does not have, with the fix.
 */
export function businessReadiness(worker: BridgeWorker): () => Record<string, unknown> {
  return () => ({
    ...heldReadiness(worker.held()),
    businesses: Object.fromEntries(
      worker
        .businessStatus()
        .map((business) => [
          business.id,
          business.pausedForMs > 0
            ? `paused for ${Math.ceil(business.pausedForMs / 1000)} s: ${
                business.pauseReason === 'auth'
                  ? 'the platform refuses its credentials (fix platform.auth of this business)'
                  : 'the platform asked it to slow down (429)'
              }`
            : 'ok',
        ]),
    ),
  });
}

/** What a reload changed, in words for the log. */
export function describeBusinessChange(
  before: readonly BusinessSetup[],
  after: readonly BusinessSetup[],
): { added: string[]; removed: string[]; changed: string[] } {
  const old = new Map(before.map((business) => [business.id, business]));
  const added: string[] = [];
  const changed: string[] = [];
  for (const business of after) {
    const previous = old.get(business.id);
    if (previous === undefined) added.push(business.id);
    else if (JSON.stringify(previous.config) !== JSON.stringify(business.config)) changed.push(business.id);
    old.delete(business.id);
  }
  return { added, removed: [...old.keys()], changed };
}

/** The held jobs in `/readyz`'s body (nothing when none): per business, a count and the fix. */
function heldReadiness(snapshot: ReturnType<BridgeWorker['held']>): Record<string, unknown> {
  if (snapshot.held.size === 0) return {};
  return {
    held: Object.fromEntries(
      [...snapshot.held].map(([tag, count]) => [
        heldLabel(tag),
        `${snapshot.complete ? '' : 'at least '}${describeHeldCount(count)} held, this config has no such business: ${heldFix(tag)}`,
      ]),
    ),
  };
}

/** The `business` a held naming is shown and labelled as: its id, or `default` for the single-business naming. */
export function heldLabel(tag: string): string {
  return tag === '' ? SINGLE_BUSINESS_ID : tag;
}
