import { beforeEach, describe, expect, it } from 'vitest';
import type { ChannelType } from '../../../src/emulator/channels.js';
import type { EmulatorHandle } from '../../../src/emulator/start-emulator.js';
import { ReplyWindowClosedError } from '../../../src/platform/reply-window-closed-error.js';
import {
  clientFor,
  FORMS,
  type Form,
  raw,
  rejectionOf,
  requestsSeen,
  useEmulator,
} from './conformance-kit.js';

const HOUR = 3_600_000;
const WINDOW_MS = 24 * HOUR;

/** The delivery status the client reads: a field in the current form, inside `metadata` in the earlier. */
async function deliveryStatusSeen(emulator: EmulatorHandle, form: Form, id: number): Promise<unknown> {
  const { messages } = await clientFor(emulator).getMessages('conv-1');
  const message = messages.find((m) => m.id === id);
  return form === 'current' ? message?.deliveryStatus : message?.metadata?.delivery_status;
}

describe.each(FORMS)('the 24-hour reply window, %s form', (form) => {
  // The emulator's clock follows the wall clock unless a test freezes it at an instant.
  let frozenAt: number | undefined;
  beforeEach(() => {
    frozenAt = undefined;
  });
  const emulator = useEmulator(form, { now: () => frozenAt ?? Date.now() });

  const apiSend = async () => {
    const result = await clientFor(emulator()).sendMessage({
      conversationId: 'conv-1',
      text: 'Pesanan siap',
    });
    expect(result.conversationId).toBe('conv-1');
    const sent = emulator()
      .admin.conversation('conv-1')
      .messages.filter((m) => m.origin === 'api');
    expect(sent).toHaveLength(1);
    return sent[0]?.id ?? -1;
  };

  it.each<[ChannelType, string | null, 'failed' | 'delivered']>([
    ['whatsapp_api', '25h', 'failed'],
    ['whatsapp_api', '23h', 'delivered'],
    ['instagram', '25h', 'failed'],
    ['instagram', '23h', 'delivered'],
    ['whatsapp_qr', '25h', 'delivered'],
    ['telegram', '25h', 'delivered'],
    ['whatsapp_api', null, 'failed'],
  ])('%s, customer last wrote %s ago: the send is accepted and ends %s', async (type, ago, expected) => {
    emulator().admin.createConversation({ id: 'conv-1', channel: { type } });
    if (ago !== null) emulator().admin.customerMessage('conv-1', { text: 'Halo', at: ago });
    const id = await apiSend();

    // The platform accepts the send (success) and reports the outcome through delivery_status.
    expect(requestsSeen(emulator())).toMatchObject([{ endpoint: 'send', httpStatus: 200, rc: null }]);
    expect(await deliveryStatusSeen(emulator(), form, id)).toBe(expected);
  });

  it.each([
    ['1 ms before 24 hours', 'delivered', WINDOW_MS - 1],
    ['exactly 24 hours', 'failed', WINDOW_MS],
    ['1 ms after 24 hours', 'failed', WINDOW_MS + 1],
  ])('a send %s after the customer’s message ends %s', async (_when, expected, afterMs) => {
    const customerAt = Date.parse('2026-03-02T01:00:00Z');
    frozenAt = customerAt;
    emulator().admin.createConversation({ id: 'conv-1', channel: { type: 'whatsapp_api' } });
    emulator().admin.customerMessage('conv-1', { text: 'Halo', at: customerAt });
    frozenAt = customerAt + afterMs;

    const id = await apiSend();
    expect(
      emulator()
        .admin.conversation('conv-1')
        .messages.find((m) => m.id === id)?.deliveryStatus,
    ).toBe(expected);
  });

  it('the client’s guard refuses a send once windowClosesAt has passed; nothing reaches the emulator', async () => {
    emulator().admin.createConversation({ id: 'conv-1', channel: { type: 'whatsapp_api' } });
    const customer = emulator().admin.customerMessage('conv-1', { text: 'Halo', at: '25h' });
    // What the worker computes: the customer's last message plus 24 hours.
    const windowClosesAt = new Date(Date.parse(customer.sentAtIso) + WINDOW_MS);

    const error = await rejectionOf(
      clientFor(emulator()).sendMessage({ conversationId: 'conv-1', text: 'Terlambat' }, { windowClosesAt }),
    );

    expect(error).toBeInstanceOf(ReplyWindowClosedError);
    expect(error).toMatchObject({ code: 'REPLY_WINDOW_CLOSED', conversationId: 'conv-1', windowClosesAt });
    expect(requestsSeen(emulator())).toEqual([]);
    expect(emulator().admin.conversation('conv-1').messageCount).toBe(1);
  });

  it('the client’s guard lets a send through while the window is open, and the emulator delivers it', async () => {
    emulator().admin.createConversation({ id: 'conv-1', channel: { type: 'whatsapp_api' } });
    const customer = emulator().admin.customerMessage('conv-1', { text: 'Halo', at: '23h' });
    const windowClosesAt = new Date(Date.parse(customer.sentAtIso) + WINDOW_MS);

    await clientFor(emulator()).sendMessage(
      { conversationId: 'conv-1', text: 'Tepat waktu' },
      { windowClosesAt },
    );

    const [, reply] = emulator().admin.conversation('conv-1').messages;
    expect(reply).toMatchObject({ text: 'Tepat waktu', deliveryStatus: 'delivered' });
  });
});

describe.each(FORMS)('WIB times, %s form', (form) => {
  let frozenAt: number | undefined;
  beforeEach(() => {
    frozenAt = undefined;
  });
  const emulator = useEmulator(form, { now: () => frozenAt ?? Date.now() });

  it.each([
    ['an ISO instant', '2026-01-05T03:00:00Z', '2026-01-05T03:00:00.000Z', '2026-01-05 10:00:00'],
    ['a WIB wall-clock time', '2026-01-05 10:00:00', '2026-01-05T03:00:00.000Z', '2026-01-05 10:00:00'],
    [
      'epoch milliseconds',
      Date.parse('2026-06-30T23:59:59Z'),
      '2026-06-30T23:59:59.000Z',
      '2026-07-01 06:59:59',
    ],
    [
      'an instant that is a new year in WIB',
      '2026-12-31T17:30:05Z',
      '2026-12-31T17:30:05.000Z',
      '2027-01-01 00:30:05',
    ],
    [
      'an instant with milliseconds (to the second)',
      '2026-01-05T03:00:00.999Z',
      '2026-01-05T03:00:00.000Z',
      '2026-01-05 10:00:00',
    ],
  ])('a customer message placed at %s reads back at that instant', async (_what, at, instant, wib) => {
    emulator().admin.createConversation({ id: 'conv-1' });
    emulator().admin.customerMessage('conv-1', { text: 'Halo', at });

    const [message] = (await clientFor(emulator()).getMessages('conv-1')).messages;
    expect(message?.sentAt.toISOString()).toBe(instant);
    // On the wire: WIB, `YYYY-MM-DD HH:MM:SS` (spec, "Message", sent_at).
    const answer = (await raw(emulator(), 'GET', '/v1/message/conv-1')).json as {
      data: { list?: Array<{ sent_at: string }> } | Array<{ sent_at: string }>;
    };
    const items = Array.isArray(answer.data) ? answer.data : (answer.data.list ?? []);
    expect(items.map((item) => item.sent_at)).toEqual([wib]);
  });

  it('a message sent through the API carries the emulator’s clock, to the second', async () => {
    emulator().admin.createConversation({ id: 'conv-1' });
    frozenAt = Date.parse('2026-08-17T02:45:30.250Z');
    const client = clientFor(emulator());
    await client.sendMessage({ conversationId: 'conv-1', text: 'Dirgahayu' });
    await client.addNote('conv-1', 'catatan');

    const { messages } = await client.getMessages('conv-1');
    expect(messages.map((m) => m.sentAt.toISOString())).toEqual([
      '2026-08-17T02:45:30.000Z',
      '2026-08-17T02:45:30.000Z',
    ]);
  });
});
