import type { RedisClient } from './redis-client.js';

/**
 * Closes one connection (or cluster client) in bounded time: QUIT when it is connected, and a
 * disconnect when it is not, when QUIT fails, or when QUIT gets no answer within `ms`. The
 * disconnect also cancels the client's reconnecting: without it, a cluster client whose nodes are
 * gone keeps asking for the slots ("Failed to refresh slots cache.") for as long as the process
 * lives, and a QUIT queued behind commands that wait for a reconnect never resolves.
 */
export async function closeConnection(client: RedisClient, ms = 1_000): Promise<void> {
  if (client.status === 'end') return;
  if (client.status === 'ready') {
    let timer: NodeJS.Timeout | undefined;
    const quitted = await Promise.race([
      client.quit().then(
        () => true,
        () => false,
      ),
      new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), ms);
      }),
    ]).finally(() => clearTimeout(timer));
    if (quitted) return;
  }
  client.disconnect();
}
