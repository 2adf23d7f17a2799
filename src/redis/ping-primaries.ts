import type { RedisClient } from './redis-client.js';
import { primaryConnections } from './scan-keys.js';

/**
 * Whether any primary answers PING within `timeoutMs` (for a cluster: any of the primaries the
 * client knows; none known means none answers). The shutdown asks this while jobs finish: a cluster
 * client may not notice for a long time that its nodes are gone (connections it has not used yet
 * never fail), while a job that needs them waits for ever.
 */
export async function anyPrimaryAnswers(redis: RedisClient, timeoutMs: number): Promise<boolean> {
  const nodes = primaryConnections(redis);
  if (nodes.length === 0) return false;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  const answers = nodes.map((node) =>
    node.ping().then(
      () => true,
      () => false,
    ),
  );
  const anyAnswer = new Promise<boolean>((resolve) => {
    let pending = answers.length;
    for (const answer of answers) {
      void answer.then((ok) => {
        pending -= 1;
        if (ok) resolve(true);
        else if (pending === 0) resolve(false);
      });
    }
  });
  try {
    return await Promise.race([anyAnswer, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
