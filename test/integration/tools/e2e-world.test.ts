import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { exampleConfig } from '../../support/bridge-harness.js';
import { createWorld, type World } from '../../support/e2e-world.js';

let world: World | undefined;
let blocker: Server | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
  await new Promise<void>((resolve) => (blocker ? blocker.close(() => resolve()) : resolve()));
  blocker = undefined;
});

describe('the end-to-end world', () => {
  it('starts its bridge on another port when its port is taken before the bridge binds it, and webhooks follow', async () => {
    blocker = createServer();
    await new Promise<void>((resolve) => blocker?.listen(0, '127.0.0.1', resolve));
    const taken = (blocker.address() as { port: number }).port;
    world = await createWorld({ config: await exampleConfig({ hours: 'open' }), port: taken });
    const w = world;
    expect(Number(w.env.PORT)).not.toBe(taken);
    w.conversation('c-world-port', { type: 'telegram', id: 'ch_tg' });
    w.say('c-world-port', 'Saya mau refund');
    await waitFor(() => w.requests('needHuman', 'c-world-port').length === 1, {
      timeoutMs: 15_000,
      what: 'the webhook to reach the bridge on its new port and the need-human call',
    });
  });
});
