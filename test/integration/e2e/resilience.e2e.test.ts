import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { exampleConfig } from '../../support/bridge-harness.js';
import { createWorld, type World } from '../../support/e2e-world.js';

const FAST_RECOVERY = { lock_duration: '2s', stalled_interval: '1s', concurrency: 8 };
const FAST_BACKOFF = { ...FAST_RECOVERY, backoff: '{ base: 200ms, max: 2s }' };

function conversations(n: number, stem: string) {
  return Array.from({ length: n }, (_, i) => `${stem}-${String(i).padStart(2, '0')}`);
}

describe('resilience end to end', () => {
  let world: World | undefined;
  afterEach(async () => {
    await world?.close();
    world = undefined;
  });

  it('a worker killed with SIGKILL mid-run and restarted: no action missing, none repeated', async () => {
    world = await createWorld({
      config: await exampleConfig({ hours: 'open', worker: FAST_RECOVERY }),
      processes: ['serve', 'work'],
    });
    const w = world;
    // Slow the platform so that the kill lands while calls are in flight.
    w.admin.addFault({ type: 'latency', endpoint: 'note', latencyMs: 150 });
    w.admin.addFault({ type: 'latency', endpoint: 'needHuman', latencyMs: 100 });
    const ids = conversations(24, 'k');
    for (const id of ids) {
      w.conversation(id, { type: 'whatsapp_qr', id: 'ch_wa_qr' });
      w.say(id, `Saya mau refund untuk ${id}`);
    }
    for (let kill = 0; kill < 2; kill++) {
      const before = ids.filter((id) => w.notes(id).length > 0).length;
      await waitFor(() => ids.filter((id) => w.notes(id).length > 0).length >= before + 3, {
        timeoutMs: 20_000,
        what: 'some progress before the kill',
      });
      const worker = w.bridges.find(
        (b) => b.proc.exitCode === null && b.logs.some((l) => l.includes('worker started')),
      );
      if (!worker) throw new Error('no running worker');
      expect(await worker.stop('SIGKILL')).toBeNull();
      await w.launch('work');
    }
    await waitFor(() => ids.every((id) => w.crm.forConversation(id).length > 0 && w.detail(id).needHuman), {
      timeoutMs: 60_000,
      what: 'every conversation to be escalated',
    });
    await waitFor(
      async () =>
        (await Promise.all(ids.map((id) => w.timerIds(id).then((t) => t.length)))).every((n) => n === 1),
      {
        timeoutMs: 20_000,
        what: 'every escalation timer to be set',
      },
    );
    // A late copy would come from a job a killed worker held: lock 2 s + stalled check 1 s.
    await w.settled({ quietMs: 4_000 });
    for (const id of ids) {
      expect(w.notes(id), id).toEqual([`Escalated by escalate-complaints: customer wrote 'refund'`]);
      // Forwards carry a stable webhook-id: a forward repeated after a kill is the same message.
      expect(new Set(w.crm.forConversation(id).map((r) => r.webhookId)).size, id).toBe(1);
    }
    expect(await w.redis.zcard(w.keys.deadIndex)).toBe(0);
  });

  it('30% 5xx and 10% 429 from the platform: every action done, exactly once', async () => {
    world = await createWorld({
      config: await exampleConfig({ hours: 'open', worker: FAST_BACKOFF }),
    });
    const w = world;
    // 5xx half "before acting" and half "after acting" (the request took effect, then 500).
    w.admin.addFault({ type: 'error', endpoint: 'all', fraction: 0.15, status: 500, mode: 'before' });
    w.admin.addFault({ type: 'error', endpoint: 'all', fraction: 0.176, status: 503, mode: 'after' });
    w.admin.addFault({ type: 'rate_limit', endpoint: 'all', fraction: 0.14, retryAfterSeconds: 1 });
    const complaints = conversations(10, 'f-complaint');
    const catalogs = conversations(10, 'f-catalog');
    for (const id of complaints) {
      w.conversation(id, { type: 'telegram', id: 'ch_tg' });
      w.say(id, 'Barang rusak, saya kecewa');
    }
    for (const id of catalogs) {
      w.conversation(id, { type: 'webchat', id: 'ch_web' });
      w.say(id, 'Kirim katalog ya');
    }
    await waitFor(
      () =>
        complaints.every(
          (id) => w.notes(id).length > 0 && w.detail(id).needHuman && w.crm.forConversation(id).length > 0,
        ) && catalogs.every((id) => w.apiMessages(id).length > 0),
      { timeoutMs: 90_000, what: 'every action despite the faults' },
    );
    // Retries wait at most 2 s (backoff max) or 1 s (Retry-After): a repeated action would show.
    await w.settled({ quietMs: 3_000 });
    const faulted = w.admin.requests().filter((r) => r.faults.length > 0).length;
    expect(faulted).toBeGreaterThan(5);
    for (const id of complaints) {
      expect(w.notes(id), id).toEqual([`Escalated by escalate-complaints: customer wrote 'kecewa'`]);
    }
    for (const id of catalogs) {
      expect(
        w.apiMessages(id).map((m) => m.text),
        id,
      ).toEqual(['https://cdn.example.com/katalog.pdf']);
    }
    expect(await w.redis.zcard(w.keys.deadIndex)).toBe(0);
  });

  it('two worker processes keep each conversation in the order its messages arrived', async () => {
    const echo = `  - name: echo
    on: message_in
    if: { text: { regex: "^m[0-9]+$" } }
    then: [ { note: "seen {{event.text}}" } ]`;
    world = await createWorld({
      config: await exampleConfig({ hours: 'open', extraRules: echo, worker: { concurrency: 8 } }),
      processes: ['serve', 'work', 'work'],
    });
    const w = world;
    // Half the notes are slow, so a worker that ignored the order would overtake.
    w.admin.addFault({ type: 'latency', endpoint: 'note', fraction: 0.5, latencyMs: 60 });
    const ids = conversations(8, 'o');
    for (const id of ids) w.conversation(id, { type: 'webchat', id: 'ch_web' });
    for (let n = 1; n <= 6; n++) for (const id of ids) w.say(id, `m${n}`);
    await waitFor(() => ids.every((id) => w.notes(id).length === 6), {
      timeoutMs: 60_000,
      what: 'every note',
    });
    await w.settled();
    for (const id of ids) {
      expect(w.notes(id), id).toEqual(['seen m1', 'seen m2', 'seen m3', 'seen m4', 'seen m5', 'seen m6']);
    }
    // Both workers did work.
    const workers = w.bridges.slice(1);
    const busy = workers.filter((b) => b.jsonLogs().length > 0);
    expect(busy).toHaveLength(2);
  });

  it('SIGTERM mid-job: exit code 0, the in-flight job finishes, and nothing is lost', async () => {
    // Done jobs kept: the test reads the finished job's result.
    world = await createWorld({
      config: await exampleConfig({ hours: 'open', retention: { done_events: '1h' } }),
    });
    const w = world;
    w.admin.addFault({ type: 'latency', endpoint: 'note', latencyMs: 1500 });
    w.conversation('s-1', { type: 'whatsapp_qr', id: 'ch_wa_qr' });
    const message = w.say('s-1', 'Saya kecewa');
    const key = `channel.message_in|${message.messageId}`;
    // Mid-job: the note call has begun (the ledger says so) but not finished.
    await waitFor(
      async () => (await w.redis.hget(w.keys.run(key), 'a:escalate-complaints#0'))?.includes('started'),
      {
        timeoutMs: 10_000,
        what: 'the note call to begin',
      },
    );
    const [bridge] = w.bridges;
    if (!bridge) throw new Error('no bridge');
    expect(await bridge.stop('SIGTERM')).toBe(0);
    // The job finished before the exit: every action done, and the run's state cleared with it.
    const run = await w.eventRun(key);
    expect(run?.result?.actions.map((a) => [a.id, a.state])).toEqual([
      ['escalate-complaints#0', 'done'],
      ['escalate-complaints#1', 'done'],
      ['escalate-complaints#2', 'done'],
      ['escalate-complaints#3', 'done'],
    ]);
    expect(await w.redis.exists(w.keys.run(key))).toBe(0);
    expect(w.notes('s-1')).toHaveLength(1);
    expect(bridge.logs.some((l) => l.includes('shutting down'))).toBe(true);
    // A fresh start finds nothing left to do and repeats nothing.
    const again = await w.launch('start');
    w.say('s-1', 'halo lagi');
    await waitFor(async () => (await w.redis.zcard(w.keys.order('s-1'))) === 0, {
      timeoutMs: 10_000,
      what: 'idle',
    });
    expect(w.notes('s-1')).toHaveLength(1);
    expect(await again.stop('SIGTERM')).toBe(0);
  });
});
