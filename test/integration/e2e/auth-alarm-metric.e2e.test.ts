import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { exampleConfig } from '../../support/bridge-harness.js';
import { createWorld, type World } from '../../support/e2e-world.js';

// Found by the fault-injection suite (test/faults, scenario 4): during a 401 storm the worker
// paused and logged the alarm, but `convo_bridge_platform_auth_failing` stayed 0. Every business
// has its own series, `business="default"` for a config without `businesses:`.
async function authFailing(w: World): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${w.env.PORT}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith('convo_bridge_platform_auth_failing{business="default"} '));
  return Number(line?.split(' ')[1] ?? Number.NaN);
}

describe('the credentials alarm metric', () => {
  let world: World | undefined;
  afterEach(async () => {
    await world?.close();
    world = undefined;
  });

  it('is 1 while the platform rejects the credentials and 0 once a call succeeds again', async () => {
    world = await createWorld({
      config: await exampleConfig({ hours: 'open', worker: { auth_failure_pause: '1s' } }),
    });
    const w = world;
    expect(await authFailing(w)).toBe(0);
    w.admin.setAuthStorm(true);
    w.conversation('m-1', { type: 'telegram', id: 'ch_tg' });
    w.say('m-1', 'Tolong refund');
    await waitFor(async () => (await authFailing(w)) === 1, {
      timeoutMs: 10_000,
      what: 'the auth alarm gauge to be 1',
    });
    w.admin.setAuthStorm(false);
    await waitFor(() => w.notes('m-1').length === 1, { timeoutMs: 15_000, what: 'the note after the storm' });
    await waitFor(async () => (await authFailing(w)) === 0, {
      timeoutMs: 10_000,
      what: 'the auth alarm gauge to be 0 again',
    });
  });
});
