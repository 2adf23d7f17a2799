import type { KeyLayout } from '../queue/key-layout.js';
import { claimLayout, LayoutMismatchError } from '../queue/layout-record.js';
import type { RedisClient } from '../redis/redis-client.js';
import type { BridgeState } from './bridge-state.js';

/**
 * Events may be stored and taken only once this Redis is known to hold the layout the config
 * asks for (shard count and key tags): else one conversation's events would land in two shards.
 * Retries while Redis is unreachable; rejects with LayoutMismatchError (also kept in
 * `state.layoutProblem`) when the Redis holds another layout.
 */
export function claimLayoutInBackground(
  redis: RedisClient,
  layout: KeyLayout,
  state: BridgeState,
): Promise<void> {
  const layoutChecked = (async () => {
    for (;;) {
      try {
        await claimLayout(redis, layout);
        return;
      } catch (error) {
        if (error instanceof LayoutMismatchError) {
          state.layoutProblem = error;
          throw error;
        }
        // Redis not reachable yet: try again (the outage reporter says so in the log).
        await new Promise((resolve) => setTimeout(resolve, 500).unref());
        if (state.shuttingDown) throw error;
      }
    }
  })();
  layoutChecked.catch(() => undefined); // handled by the composition root, once stop() exists
  return layoutChecked;
}
