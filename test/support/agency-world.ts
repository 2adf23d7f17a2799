import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { businessNaming } from '../../src/events/business-naming.js';
import { createKeyLayout, type KeyLayout } from '../../src/queue/key-layout.js';
import type { BridgeKeys } from '../../src/queue/redis-keys.js';
import { quarantineBody } from '../../src/receive/quarantine-store.js';
import { connectTestRedis, deleteKeys, testRedisUrl, uniqueName } from './redis.js';

/**
 * A bridge config of several businesses (`toko-a`, `toko-b`, ...: each with its own platform
 * credentials) written to a temporary file, beside the shared test Redis under a prefix of its own:
 * what the operator commands and forget are run against in process. `close()` deletes its keys and
 * its folder.
 */
export interface AgencyWorld {
  readonly config: string;
  readonly redis: Redis;
  readonly prefix: string;
  readonly layout: KeyLayout;
  /** The global keys of a business's own naming. */
  keysOf(business: string): BridgeKeys;
  /** Quarantines `rawBody` as an unknown event named `eventName`, naming no conversation. */
  quarantineUnknown(business: string, eventName: string, rawBody: string): Promise<void>;
  close(): Promise<void>;
}

export async function createAgencyWorld(stem: string, businesses: readonly string[]): Promise<AgencyWorld> {
  const prefix = uniqueName(stem);
  const layout = createKeyLayout({ prefix, shards: 1, tagged: false });
  const dir = await mkdtemp(join(tmpdir(), `${stem}-`));
  const config = join(dir, 'agency.yaml');
  const entries = businesses.map((id) => {
    const short = id.replace(/^toko-/, '');
    return `  - id: ${id}\n    platform: { base_url: "https://${short}.invalid", auth: { business_id: biz-${short}, secret: sk-${short} } }\n`;
  });
  await writeFile(
    config,
    `platform: { form: current }\nredis: { url: "${testRedisUrl()}", prefix: ${prefix} }\nrules: []\nbusinesses:\n${entries.join('')}`,
  );
  const redis = connectTestRedis();
  const keysOf = (business: string) => layout.forNaming(businessNaming(business, false)).global;
  return {
    config,
    redis,
    prefix,
    layout,
    keysOf,
    quarantineUnknown: async (business, eventName, rawBody) => {
      await quarantineBody(
        { redis, keys: keysOf(business) },
        {
          rawBody: Buffer.from(rawBody),
          reason: 'unknown_event',
          message: 'unknown event name',
          eventName,
          conversationId: null,
          receivedAt: new Date(),
        },
      );
    },
    close: async () => {
      await deleteKeys(redis, prefix);
      await redis.quit();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
