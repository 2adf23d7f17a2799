import { randomInt, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { runCli } from '../../../src/cli/run-cli.js';
import { exampleConfig } from '../../support/bridge-harness.js';
import { createWorld, E2E, itOffCluster, type World } from '../../support/e2e-world.js';
import { familyMatcher, privacyKeyFamilies } from '../../support/privacy-families.js';
import { everyKeyAndValue, keysHolding } from '../../support/scan-redis.js';

// Issue 27, "done when": with recorded events on, conversations whose texts hold a phone number
// and an e-mail address are processed (note, need-human, a pending timer, a reply, one dead
// letter, one quarantined body) beside others; after `forget --conversation`, no key or value of
// Redis holds the ids or those texts, the timer never fires, the others are intact, and the log
// never held the phone or the address. The cluster project runs it on 3 primaries, 6 shards.
// Shadow rules (issue 28) are on, with a candidate whose escalation note names the customer, so
// that their kept differences hold the conversation ids and the name too.

const TOKEN = randomUUID().slice(0, 8);
const PHONE = `0812-${randomInt(1000, 9999)}-${randomInt(1000, 9999)}`;
const EMAIL = `budi.${TOKEN}@example.com`;
const NAME = `Budi Forgetme ${TOKEN}`;
const C1 = `c-forget-${TOKEN}-chat`;
const C2 = `c-forget-${TOKEN}-dead`;
const C3 = `c-forget-${TOKEN}-quarantined`;
const TEXT_REFUND = `Saya mau refund, hubungi ${PHONE} atau ${EMAIL} ya`;
const TEXT_CATALOG = `minta katalog dong, kirim ke ${EMAIL}`;
const TEXT_DEAD = `refund! nomor saya ${PHONE}`;
const TEXT_QUARANTINED = `reaksi dari ${EMAIL}`;
const OTHERS = Array.from({ length: 6 }, (_, i) => `c-keep-${TOKEN}-${i}`);
/** Long enough for the events to be processed and forgotten first, short enough to wait out. */
const TIMER = '12s';

async function cli(argv: string[]) {
  let out = '';
  let err = '';
  const code = await runCli(argv, { stdout: (t) => (out += t), stderr: (t) => (err += t) });
  return { code, out, err };
}

async function postWebhook(world: World, body: unknown): Promise<void> {
  const response = await fetch(`http://127.0.0.1:${world.env.PORT}${E2E.path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: E2E.webhookSecret },
    body: JSON.stringify(body),
  });
  expect(await response.json()).toEqual({ success: true });
}

const NEEDLES = [C1, C2, C3, PHONE, EMAIL, NAME, TEXT_REFUND, TEXT_CATALOG, TEXT_DEAD, TEXT_QUARANTINED];

describe('forget, end to end', () => {
  let world: World;
  let forgetAt = 0;
  const notesBefore = new Map<string, number>();
  let keptRecorded: Map<string, string>;
  let shadowDir: string;

  beforeAll(async () => {
    const example = await exampleConfig({ hours: 'open', timer: TIMER });
    shadowDir = await mkdtemp(join(tmpdir(), 'forget-shadow-'));
    const candidate = join(shadowDir, 'candidate.yaml');
    await writeFile(
      candidate,
      example
        .slice(example.indexOf('rules:\n'))
        .replace('note: "Escalated by', 'note: "Escalated for {{customer.name}} by'),
    );
    const config = `${example}record:\n  enabled: true\nshadow:\n  rules: ${candidate}\n`;
    world = await createWorld({ config });
    const w = world;
    const fixture = JSON.parse(
      await readFile(join('test', 'fixtures', 'webhooks', 'channel-message-in.json'), 'utf8'),
    );
    // C1: note, need-human, forward and a pending timer (complaint), then a media reply (catalog).
    w.conversation(C1, { type: 'whatsapp_api', id: 'ch_waba_1' }, NAME);
    w.say(C1, TEXT_REFUND);
    w.say(C1, TEXT_CATALOG);
    // C2: a complaint on a conversation the platform does not know: its note is refused for good.
    await postWebhook(w, {
      ...fixture,
      conversation_id: C2,
      conversation_label: NAME,
      message: {
        ...fixture.message,
        id: `m-${TOKEN}-dead`,
        sender_name: NAME,
        content: { type: 'text', text: TEXT_DEAD },
      },
    });
    // C3: an authenticated body the receiver does not understand yet: quarantined.
    await postWebhook(w, {
      ...fixture,
      event: 'channel.message_reaction',
      conversation_id: C3,
      message: {
        ...fixture.message,
        id: `m-${TOKEN}-q`,
        sender_name: NAME,
        content: { type: 'text', text: TEXT_QUARANTINED },
      },
    });
    for (const [i, id] of OTHERS.entries()) {
      w.conversation(id, { type: 'telegram', id: 'ch_tg' }, `Pelanggan ${i}`);
      w.say(id, i % 2 === 0 ? 'Saya mau refund' : 'minta katalog dong');
    }
    await waitFor(
      async () =>
        (await w.redis.zcard(w.keys.deadIndex)) === 1 &&
        (await w.redis.zcard(w.keys.quarantine)) === 1 &&
        (await w.redis.zcard(w.keys.recordedIndex)) === 3 + OTHERS.length &&
        (await w.timerIds(C1)).length === 1 &&
        w.apiMessages(C1).length === 1,
      {
        timeoutMs: 30_000,
        what: 'every event processed, the dead letter, the quarantined body and the timer',
      },
    );
    await w.settled({ quietMs: 1_000 });
    for (const id of [C1, ...OTHERS]) notesBefore.set(id, w.notes(id).length);
    keptRecorded = new Map(
      Object.entries(await w.redis.hgetall(w.keys.recordedEntries)).filter(([, line]) =>
        OTHERS.some((id) => line.includes(`"${id}"`)),
      ),
    );
  }, 90_000);

  afterAll(async () => {
    await world?.close();
    if (shadowDir) await rm(shadowDir, { recursive: true, force: true });
  });

  it('before forget, the ids and texts are in Redis (the scan can see them)', async () => {
    const all = await everyKeyAndValue(world.redis);
    // Every key this bridge wrote (records, timers, a dead letter, a quarantined body) has a row in
    // docs/privacy.md: a new key family without one fails here.
    const matchers = privacyKeyFamilies().map((family) => familyMatcher(family, world.prefix));
    const ours = [...all.keys()].filter(
      (key) => key.startsWith(`${world.prefix}:`) || key.startsWith(`{${world.prefix}`),
    );
    expect(ours.length).toBeGreaterThan(20);
    expect(ours.filter((key) => !matchers.some((m) => m.test(key)))).toEqual([]);
    const holding = keysHolding(all, NEEDLES);
    const seen = new Set([...holding.values()].flat());
    for (const needle of [C1, C2, C3, PHONE, EMAIL, TEXT_REFUND, TEXT_DEAD, TEXT_QUARANTINED]) {
      expect(seen, `the scan should find ${needle}`).toContain(needle);
    }
    expect(holding.get(world.keys.shadowExamples)).toEqual(expect.arrayContaining([C1, C2, NAME]));
  });

  it('forget erases every trace of the conversations, per store, and is idempotent', async () => {
    const flags = ['--redis-url', world.env.REDIS_URL as string, '--prefix', world.prefix];
    const dry = await cli(['forget', ...flags, '--conversation', C1, '--dry-run', '--json']);
    expect(dry.code, dry.err).toBe(0);
    const planned = JSON.parse(dry.out).conversations[0].erased;
    expect(planned).toMatchObject({
      'conversation state': 1,
      'timer jobs': 1,
      'recorded events': 2,
      'shadow differences': 1,
    });
    expect(keysHolding(await everyKeyAndValue(world.redis), [C1]).size).toBeGreaterThan(0);

    forgetAt = Date.now();
    const run = await cli([
      'forget',
      ...flags,
      '--conversation',
      C1,
      '--conversation',
      C2,
      '--conversation',
      C3,
    ]);
    expect(run.code, run.err).toBe(0);
    expect(run.out).toContain(`conversation "${C1}"`);
    expect(run.out).toMatch(/timer jobs\s+1/);
    expect(run.out).toMatch(/dead letters\s+1/);
    expect(run.out).toMatch(/quarantined bodies\s+1/);

    const left = keysHolding(await everyKeyAndValue(world.redis), NEEDLES);
    expect(Object.fromEntries(left)).toEqual({});

    const again = await cli([
      'forget',
      ...flags,
      '--conversation',
      C1,
      '--conversation',
      C2,
      '--conversation',
      C3,
      '--json',
    ]);
    expect(again.code, again.err).toBe(0);
    for (const result of JSON.parse(again.out).conversations) {
      expect(
        Object.values(result.erased).every((n) => n === 0),
        JSON.stringify(result),
      ).toBe(true);
    }
  });

  it('the forgotten timer never fires; the others fire once and keep their data', async () => {
    const w = world;
    // Every other complaint's timer fires (a note each); C1's was due at the same time.
    const complaints = OTHERS.filter((_, i) => i % 2 === 0);
    await waitFor(() => complaints.every((id) => w.notes(id).length === (notesBefore.get(id) ?? 0) + 1), {
      timeoutMs: 40_000,
      what: "the other conversations' timers",
    });
    await w.settled({ quietMs: 3_000 });
    expect(w.notes(C1)).toHaveLength(notesBefore.get(C1) ?? 0);
    expect(w.requests('note', C1).filter((r) => Date.parse(r.at) > forgetAt)).toEqual([]);
    for (const id of OTHERS) {
      expect(w.notes(id)).toHaveLength((notesBefore.get(id) ?? 0) + (complaints.includes(id) ? 1 : 0));
    }
    // Nothing wrote the forgotten conversations back.
    expect(Object.fromEntries(keysHolding(await everyKeyAndValue(w.redis), NEEDLES))).toEqual({});
    const recorded = await w.redis.hgetall(w.keys.recordedEntries);
    for (const [id, line] of keptRecorded) expect(recorded[id]).toBe(line);
    for (const id of OTHERS) expect(await w.redis.exists(w.keys.conversation(id))).toBe(1);
  });

  itOffCluster()('the log never held the phone number, the address or the name', () => {
    const log = world.bridges.flatMap((b) => b.logs).join('\n');
    expect(log.length).toBeGreaterThan(0);
    for (const needle of [PHONE, PHONE.replace(/-/g, ''), EMAIL, NAME]) expect(log).not.toContain(needle);
  });
});
