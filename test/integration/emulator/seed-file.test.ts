import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmulatorError } from '../../../src/emulator/emulator-error.js';
import { loadSeedFile } from '../../../src/emulator/seed-data.js';
import { platform, startReceiver, startTestEmulator } from './emulator-test-kit.js';

describe('seed files (real files)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'emulator-seed-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const file = async (name: string, text: string) => {
    const path = join(dir, name);
    await writeFile(path, text);
    return path;
  };

  it('starts with the conversations and messages of a YAML file, emitting no webhooks', async () => {
    const path = await file(
      'shop.yaml',
      `conversations:
  - id: conv-budi
    label: Budi
    channel: {type: whatsapp_api, id: ch-waba, name: WA Bisnis}
    messages:
      - {from: customer, text: "Halo, stok ada?", ago: 25h}
      - {from: ai, text: "Ada, Kak."}
      - {from: note, text: "Pelanggan lama"}
  - id: conv-sari
    label: Sari
    channel: telegram
    messages:
      - {from: customer, text: "Pesanan saya?", at: "2026-01-05 09:30:00"}
  - id: conv-tono
    need_human: true
`,
    );
    const receiver = await startReceiver();
    const emulator = await startTestEmulator({ seedFile: path, webhook: { url: receiver.url, secret: 'x' } });
    try {
      const budi = emulator.admin.conversation('conv-budi');
      expect(budi).toMatchObject({
        label: 'Budi',
        channel: { type: 'whatsapp_api', id: 'ch-waba', name: 'WA Bisnis' },
        status: 'Ditangani',
      });
      expect(budi.messages.map((m) => [m.origin, m.senderName])).toEqual([
        ['customer', 'Budi'],
        ['ai', 'Asisten - AI'],
        ['note', 'api'],
      ]);
      const sari = emulator.admin.conversation('conv-sari');
      expect(sari).toMatchObject({ status: 'Belum Dibaca', channel: { type: 'telegram' } });
      expect(sari.messages[0]?.sentAt).toBe('2026-01-05 09:30:00');
      expect(emulator.admin.conversation('conv-tono')).toMatchObject({
        status: 'Butuh CS',
        needHuman: true,
        mode: 'human',
      });
      expect((await platform(emulator).total()).json.data.total).toBe(1);
      // The seeded customer message is 25 h old, so the reply window on the business API is closed.
      await platform(emulator).send({ conversation_id: 'conv-budi', text: 'Maaf telat' });
      expect(emulator.admin.conversation('conv-budi').messages.at(-1)?.deliveryStatus).toBe('failed');
      expect(emulator.admin.deliveries()).toEqual([]);
      expect(receiver.calls).toEqual([]);
      // reset goes back to the seed; reset {empty} to nothing.
      emulator.admin.createConversation({ id: 'extra' });
      await emulator.admin.reset();
      expect(emulator.admin.conversations().map((c) => c.id)).toEqual([
        'conv-budi',
        'conv-sari',
        'conv-tono',
      ]);
      await emulator.admin.reset({ empty: true });
      expect(emulator.admin.conversations()).toEqual([]);
    } finally {
      await emulator.close();
      await receiver.close();
    }
  });

  it('reads JSON too', async () => {
    const path = await file(
      'shop.json',
      JSON.stringify({ conversations: [{ id: 'c1', channel: 'instagram' }] }),
    );
    const seed = await loadSeedFile(path);
    expect(seed.conversations[0]).toMatchObject({ id: 'c1', channel: { type: 'instagram' }, messages: [] });
  });

  it.each([
    ['empty.yaml', '', 'expected an object with a "conversations" list, got nothing'],
    ['list.yaml', '- id: c1\n', 'expected an object with a "conversations" list, got a list'],
    ['scalar.yaml', 'hello\n', 'expected an object with a "conversations" list, got string'],
    [
      'no-conversations.yaml',
      'conversation: []\n',
      'conversations: Invalid input: expected array, received undefined; (top level): Unrecognized key: "conversation"',
    ],
    [
      'typo.yaml',
      'conversations:\n  - id: c1\n    lable: Budi\n',
      'conversations[0]: Unrecognized key: "lable"',
    ],
    [
      'no-id.yaml',
      'conversations:\n  - label: Budi\n',
      'conversations[0].id: Invalid input: expected string, received undefined',
    ],
    [
      'duplicate.yaml',
      'conversations:\n  - id: c1\n  - id: c1\n',
      'conversations[1].id: duplicate conversation id "c1"',
    ],
    [
      'channel.yaml',
      'conversations:\n  - id: c1\n    channel: myspace\n',
      'conversations[0].channel.type: Invalid option: expected one of "whatsapp_qr"|"whatsapp_api"|"telegram"|"instagram"|"facebook"|"intercom"|"slack"|"socialchat"|"webchat"',
    ],
    [
      'status.yaml',
      'conversations:\n  - id: c1\n    status: Open\n',
      'conversations[0].status: Invalid option: expected one of "Belum Dibaca"|"Butuh CS"|"Belum Ditangani"|"Ditangani"|"Selesai"|"Diblokir"|"Dilewati"',
    ],
    [
      'from.yaml',
      'conversations:\n  - id: c1\n    messages:\n      - {from: bot, text: hi}\n',
      'conversations[0].messages[0].from: Invalid option: expected one of "customer"|"ai"|"agent"|"api"|"note"',
    ],
    [
      'both.yaml',
      'conversations:\n  - id: c1\n    messages:\n      - {from: customer, text: hi, media: {type: image, url: "https://f.example/a.png"}}\n',
      'conversations[0].messages[0]: give exactly one of text or media',
    ],
    [
      'neither.yaml',
      'conversations:\n  - id: c1\n    messages:\n      - {from: customer}\n',
      'conversations[0].messages[0]: give exactly one of text or media',
    ],
    [
      'time.yaml',
      'conversations:\n  - id: c1\n    messages:\n      - {from: customer, text: hi, at: yesterday}\n',
      'conversations[0].messages[0].at: cannot read "yesterday" as a time: use epoch milliseconds, an ISO time with a zone (2026-01-05T03:00:00Z), WIB "YYYY-MM-DD HH:MM:SS", or an age such as "25h"',
    ],
    [
      'media-url.yaml',
      'conversations:\n  - id: c1\n    messages:\n      - {from: customer, media: {type: image, url: "ftp://f.example/a.png"}}\n',
      'conversations[0].messages[0].media.url: Invalid URL',
    ],
  ])('rejects %s with a message naming the place', async (name, text, detail) => {
    const path = await file(name, text);
    const error = await loadSeedFile(path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmulatorError);
    expect((error as EmulatorError).code).toBe('EMULATOR_SEED_INVALID');
    expect((error as EmulatorError).message).toBe(`seed file ${path}: ${detail}`);
  });

  it.each([
    ['broken.yaml', 'conversations: [\n', 'is not valid JSON or YAML: '],
    ['broken.json', '{"conversations": [}', 'is not valid JSON or YAML: '],
    ['tag.yaml', 'conversations: !!js/function "function () {}"\n', 'is not valid JSON or YAML: '],
    [
      'laughs.yaml',
      `a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n`,
      'cannot be read: ',
    ],
  ])('rejects %s as unreadable', async (name, text, expected) => {
    const path = await file(name, text);
    const error = await loadSeedFile(path).catch((e: unknown) => e);
    expect((error as EmulatorError).code).toBe('EMULATOR_SEED_INVALID');
    expect((error as EmulatorError).message).toContain(`seed file ${path} ${expected}`);
  });

  it('names the path when the file is missing', async () => {
    const path = join(dir, 'missing.yaml');
    const error = await loadSeedFile(path).catch((e: unknown) => e);
    expect((error as EmulatorError).message).toMatch(
      new RegExp(
        `^cannot read seed file ${path.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: ENOENT.*\\(check the --seed path\\)$`,
      ),
    );
  });

  it('refuses to start with an invalid seed file', async () => {
    const path = await file('bad-start.yaml', 'conversations: 5\n');
    await expect(startTestEmulator({ seedFile: path })).rejects.toThrow(
      `seed file ${path}: conversations: Invalid input: expected array, received number`,
    );
  });
});
