import { describe, expect, it } from 'vitest';
import { parseStorySettings } from '../../../src/config/config-schema.js';
import { businessNaming } from '../../../src/events/business-naming.js';
import { createKeyLayout, keySlot } from '../../../src/queue/key-layout.js';
import { buildEventStory } from '../../../src/story/build-story-write.js';
import { storyScriptInput } from '../../../src/story/story-lua.js';
import { makeEvent } from '../../support/make-event.js';

/**
 * On a Redis Cluster, the story's keys must be in the conversation's slot: the finish script that
 * writes them runs there (with the conversation hash and its order), and a script's keys share a slot.
 */
describe("the story's keys on a cluster", () => {
  const layout = createKeyLayout({ prefix: 'cb', shards: 8, tagged: true }).forNaming(
    businessNaming('toko', false),
  );
  it.each(['C1', '6281234567890', 'conv-ü'])(
    "every key of %s's story write is in its conversation's slot",
    (id) => {
      const keys = layout.shardOf(id).keys;
      const slot = keySlot(keys.conversation(id));
      expect(keySlot(keys.order(id))).toBe(slot);
      const write = buildEventStory(
        {
          event: makeEvent({ conversationId: id, text: 'refund 0812 3456 7890', senderName: 'Siti' }),
          now: Date.now(),
          actions: [],
          matched: ['escalate'],
          reports: [],
          cancelledTimers: [],
          windowApplies: false,
          windowOpenUntil: null,
          attempts: 1,
          ownSend: false,
        },
        parseStorySettings(),
      );
      const input = storyScriptInput(keys, id, write, {
        now: Date.now(),
        ttlMs: 1000,
        maxEntries: 200,
        events: 1,
      });
      expect(input.keys.length).toBeGreaterThan(4);
      for (const key of input.keys) expect(keySlot(key)).toBe(slot);
    },
  );
});
