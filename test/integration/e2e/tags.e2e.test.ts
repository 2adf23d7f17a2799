import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { runCli } from '../../../src/cli/run-cli.js';
import { RecordedEventSchema } from '../../../src/record/recorded-event.js';
import { exampleConfig } from '../../support/bridge-harness.js';
import { createWorld, type World } from '../../support/e2e-world.js';

/**
 * Issue 28, point 2, "done when": a tag set by one message changes what a later message of the
 * same conversation does, and nothing in another conversation; exactly once once the world has
 * settled. emulator -> webhook -> convo-bridge start (a real process, shipped defaults) -> the
 * platform API and a signed CRM forward; the tags live in the conversation hash; the recorded
 * facts of the later message hold the tag it saw.
 */
const RULES = `  - name: mark-vip
    on: message_in
    if: { text: { any_keywords: [ "member gold" ] } }
    then: [ { tag: vip, for: 30d }, { note: "VIP noted ({{tags}})" } ]
  - name: vip-complaint
    on: message_in
    if: { tags: { any: [ vip ] }, text: { any_keywords: [ kecewa ] } }
    then: [ { need_human: true }, { note: "VIP complaint ({{tags}})" }, { forward: crm } ]
    stop: true
  - name: complaint
    on: message_in
    if: { text: { any_keywords: [ kecewa ] } }
    then: [ { note: "complaint, the usual queue" } ]
`;

/** The example's platform, receiver and Redis sections with these rules alone, and recording on. */
async function tagsConfig(): Promise<string> {
  const example = await exampleConfig({ hours: 'open' });
  const head = example.slice(0, example.indexOf('rules:\n'));
  return `${head}rules:\n${RULES}record:\n  enabled: true\n`;
}

async function cli(argv: string[]) {
  let out = '';
  let err = '';
  const code = await runCli(argv, { stdout: (t) => (out += t), stderr: (t) => (err += t) });
  return { code, out, err };
}

describe('tags end to end', () => {
  let world: World | undefined;
  afterEach(async () => {
    await world?.close();
    world = undefined;
  });

  it('a tag set by one message changes what a later message of the conversation does, and nothing elsewhere; exactly once', async () => {
    world = await createWorld({ config: await tagsConfig() });
    const w = world;
    w.conversation('c-vip', { type: 'telegram', id: 'ch_tg' });
    w.conversation('c-plain', { type: 'telegram', id: 'ch_tg' });

    w.say('c-vip', 'Halo, saya member gold');
    await waitFor(() => w.notes('c-vip').length === 1, { timeoutMs: 15_000, what: 'the VIP note' });
    // The same words in both conversations; only the tagged one takes the VIP path.
    w.say('c-vip', 'Saya kecewa, paket belum sampai');
    w.say('c-plain', 'Saya kecewa, paket belum sampai');
    await waitFor(() => w.notes('c-vip').length === 2 && w.notes('c-plain').length === 1, {
      timeoutMs: 15_000,
      what: 'the complaint notes',
    });
    await w.settled();

    expect(w.notes('c-vip')).toEqual(['VIP noted (vip)', 'VIP complaint (vip)']);
    expect(w.detail('c-vip').needHuman).toBe(true);
    const forwards = w.crm.forConversation('c-vip');
    expect(forwards).toHaveLength(1);
    expect(forwards[0]?.verified).toBe(true);
    expect(JSON.parse(forwards[0]?.body ?? '{}')).toMatchObject({
      rule: 'vip-complaint',
      tags: ['vip'],
      event: { conversationId: 'c-vip', text: 'Saya kecewa, paket belum sampai' },
    });

    expect(w.notes('c-plain')).toEqual(['complaint, the usual queue']);
    expect(w.detail('c-plain').needHuman).toBe(false);
    expect(w.crm.forConversation('c-plain')).toEqual([]);

    // Where they live: the conversation hash, a field per tag whose value is its expiry.
    const fields = async (c: string) =>
      Object.entries(await w.redis.hgetall(w.keys.conversation(c))).filter(([f]) => f.startsWith('G:'));
    const vip = await fields('c-vip');
    expect(vip.map(([f]) => f)).toEqual(['G:vip']);
    expect(Number(vip[0]?.[1])).toBeGreaterThan(Date.now() + 29 * 86_400_000);
    expect(await fields('c-plain')).toEqual([]);

    // The recorded facts of the later message hold the tag it saw; the first message saw none.
    const dir = await mkdtemp(join(tmpdir(), 'tags-e2e-'));
    try {
      const file = join(dir, 'events.jsonl');
      const exported = await cli([
        'events',
        'export',
        '--redis-url',
        w.env.REDIS_URL as string,
        '--prefix',
        w.prefix,
        '--out',
        file,
      ]);
      expect(exported.code).toBe(0);
      const lines = (await readFile(file, 'utf8'))
        .trim()
        .split('\n')
        .map((line) => RecordedEventSchema.parse(JSON.parse(line)))
        .filter((line) => line.event.conversationId === 'c-vip');
      expect(lines.map((l) => [l.event.text, Object.keys(l.facts.tags ?? {})])).toEqual([
        ['Halo, saya member gold', []],
        ['Saya kecewa, paket belum sampai', ['vip']],
      ]);
      expect(lines[0]?.plan?.actions.map((a) => [a.type, a.tags])).toEqual([
        ['tag', ['vip']],
        ['note', undefined],
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
