import type { KeyLayout } from '../queue/key-layout.js';
import { claimLayout, LayoutMismatchError } from '../queue/layout-record.js';
import { RedisDatabaseError } from '../redis/database-guard.js';
import type { RedisClient } from '../redis/redis-client.js';
import type { BridgeState } from './bridge-state.js';

/**
 * Events may be stored and taken only once this Redis is known to hold the layout the config
 * asks for (shard count and key tags): else one conversation's events would land in two shards.
 * Retries while Redis is unreachable; rejects with LayoutMismatchError (also kept in
 * `state.layoutProblem`) when the Redis holds another layout, and with RedisDatabaseError when
 * it refuses the configured database.
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
        // A refused database will not come right by retrying, and every connection
        // of the bridge refuses to run commands in another one: stop, like a layout mismatch.
        if (error instanceof LayoutMismatchError || error instanceof RedisDatabaseError) {
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
