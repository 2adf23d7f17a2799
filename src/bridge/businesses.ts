import type { LoadedConfig } from '../config/load-config.js';
import type { ReceiverBusiness } from '../receive/receiver-options.js';
import type { BusinessStatus } from '../worker/businesses/business-table.js';
import type { BusinessSetup } from './compose-worker.js';

/**
 * The businesses of a config that names them (`businesses:` or `businesses_dir`), or undefined
 * for a config of one business, which runs exactly as before businesses existed.
 */
export function explicitBusinesses(loaded: LoadedConfig): readonly BusinessSetup[] | undefined {
  if (!loaded.businesses.some((business) => business.explicit)) return undefined;
  return loaded.businesses.map(({ id, config, rules, shadow }) => ({
    id,
    config,
    rules,
    ...(shadow ? { shadow } : {}),
  }));
}

/** Where each business's webhooks arrive, and with which secrets. */
export function receiverBusinesses(businesses: readonly BusinessSetup[]): ReceiverBusiness[] {
  return businesses.map(({ id, config }) => ({
    id,
    path: config.receiver.path,
    secrets: config.receiver.secrets,
  }));
}

/** `/readyz`'s word on each business: `ok`, or paused, for how long and why. */
export function businessReadiness(status: () => BusinessStatus[]): () => Record<string, unknown> {
  return () => ({
    businesses: Object.fromEntries(
      status().map((business) => [
        business.id ?? 'default',
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
