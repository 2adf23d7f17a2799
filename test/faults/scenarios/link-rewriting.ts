import { createFaultWorld } from '../support/fault-world.js';
import { check, type Scenario } from '../support/scenario.js';
import { createConversations, mapLimit, sendMessages } from '../support/traffic.js';

/** The reply: an image link (split off as an image message) and an unreachable link (removed). */
const IMAGE_URL = 'https://img.example/produk.jpg';
const REPLY_TEXT = `Foto produk: ${IMAGE_URL} dan katalog https://gone.example/katalog.pdf, terima kasih!`;

const PHOTO_RULE = `  - name: photo-links
    on: message_in
    if: { text: { any_keywords: [ foto ] } }
    then:
      - reply: { text: "${REPLY_TEXT}" }`;

/**
 * 6. Link rewriting (issue 12). The platform rewrites a text with links before storing it
 * (interface, POST /v1/message, behaviour 3): the image link becomes a separate image message and
 * the unreachable link is removed. Every send is answered 503 after the platform acted on it, so
 * the worker must look for the reply in the history; it finds it only if it compares what the
 * platform stored, not what it sent. Before the fix each conversation got the message again on
 * every attempt.
 */
export const linkRewriting: Scenario = {
  id: 6,
  name: 'Link rewriting',
  budgetMs: (scale) => (scale === 'full' ? 240_000 : 120_000),
  async run(scale, { log, signal }) {
    const count = scale === 'full' ? 100 : 20;
    const world = await createFaultWorld({
      config: {
        hours: 'open',
        extraRules: PHOTO_RULE,
        worker: { backoff: '{ base: 200ms, max: 2s }' },
      },
      processes: ['start'],
      randomSeed: 606,
      emulatorArgs: ['--image-links', 'https://img.example/', '--reachable-links', 'https://toko.example/'],
      signal,
    });
    try {
      const conversations = Array.from({ length: count }, (_, i) => ({
        id: `lr-${String(i).padStart(4, '0')}`,
        channel: { type: 'telegram' as const, id: 'ch_tg' },
      }));
      await createConversations(world.admin, conversations);
      await world.admin.addFault({
        type: 'error',
        endpoint: 'send',
        fraction: 1,
        status: 503,
        mode: 'after',
      });
      const messages = conversations.map((c, i) => ({
        conversationId: c.id,
        kind: 'neutral' as const,
        text: `Ada foto produknya? (${i})`,
        note: null,
      }));
      await sendMessages(world.admin, messages, { concurrency: 8 });
      log(`${count} customer messages sent; every send is answered 503 after acting`);
      await world.settle(60_000 + count * 500, 'the bridge to finish the photo replies');

      const details = await mapLimit(conversations, 8, (c) => world.admin.conversation(c.id));
      const requests = await world.admin.requests();
      const sends = requests.filter((r) => r.endpoint === 'send');
      const faulted = sends.filter((r) => r.faults.length > 0).length;
      let texts = 0;
      let images = 0;
      let duplicated = 0;
      let missing = 0;
      const storedTexts = new Set<string>();
      for (const detail of details) {
        const api = detail.messages.filter((m) => m.origin === 'api');
        const conversationTexts = api.filter((m) => m.type === 'text');
        const conversationImages = api.filter((m) => m.type === 'image');
        texts += conversationTexts.length;
        images += conversationImages.length;
        for (const m of conversationTexts) storedTexts.add(m.text);
        if (conversationTexts.length > 1 || conversationImages.length > 1) duplicated += 1;
        if (conversationTexts.length === 0) missing += 1;
      }
      const dead = await world.deadLetters();
      const problems: string[] = [];
      check(problems, duplicated === 0, `${duplicated} conversations got the reply more than once`);
      check(problems, missing === 0, `${missing} conversations got no reply`);
      check(problems, sends.length === count, `${sends.length} send requests for ${count} replies`);
      check(problems, faulted === count, `the 503-after fault fired ${faulted} times, expected ${count}`);
      check(problems, images === count, `${images} image messages split off, expected ${count}`);
      // The platform did rewrite the text (otherwise this scenario proves nothing).
      check(
        problems,
        [...storedTexts].every((t) => !t.includes('https://')),
        `stored texts still hold links: ${[...storedTexts].join(' | ')}`,
      );
      check(problems, dead === 0, `${dead} dead letters`);
      return {
        scale: `${count} conversations, every send 503 after acting`,
        figures: {
          'send requests': `${sends.length} (${faulted} answered 503 after acting)`,
          'text messages stored/expected': `${texts}/${count}`,
          'image messages split off/expected': `${images}/${count}`,
          'conversations with a duplicate': duplicated,
          'stored text': [...storedTexts].join(' | '),
          'dead letters': dead,
        },
        expected: 'one message per reply (0 duplicates) although the platform split and stripped its links',
        passed: problems.length === 0,
        problems,
        worst: {},
      };
    } finally {
      await world.close();
    }
  },
};
