import { describe, expect, it } from 'vitest';
import {
  type EmulatorEvent,
  EmulatorState,
  type StoredMessage,
} from '../../../src/emulator/emulator-state.js';

function makeState() {
  const events: EmulatorEvent[] = [];
  const outbound: [StoredMessage, boolean][] = [];
  let now = Date.parse('2026-02-01T00:00:00Z');
  const state = new EmulatorState({
    business: { id: 'biz', name: 'Toko' },
    ai: { id: 'ai', name: 'Asisten', label: 'AI' },
    defaultAgentName: 'Agen',
    aiMarksHandled: true,
    links: undefined,
    now: () => now,
    hooks: {
      onEvent: (event) => events.push(event),
      onOutbound: (message, outside) => outbound.push([message, outside]),
    },
  });
  return { state, events, outbound, tick: (ms: number) => (now += ms) };
}

describe('EmulatorState', () => {
  it('numbers messages with one ascending counter across conversations', () => {
    const { state } = makeState();
    state.createConversation({ id: 'a' });
    state.createConversation({ id: 'b' });
    state.addCustomerMessage('a', { content: { kind: 'text', text: '1' } });
    state.addCustomerMessage('b', { content: { kind: 'text', text: '2' } });
    state.addNote('a', '3');
    expect(state.messagesAfter('a', 0, 0).map((m) => m.id)).toEqual([1, 3]);
    expect(state.messagesAfter('b', 0, 0).map((m) => m.id)).toEqual([2]);
  });

  it('finds messages after a cursor by binary search, with and without a limit', () => {
    const { state } = makeState();
    state.createConversation({ id: 'a' });
    state.createConversation({ id: 'other' });
    for (let i = 0; i < 50; i += 1) {
      state.addNote(i % 3 === 0 ? 'other' : 'a', String(i));
    }
    const all = state.messagesAfter('a', 0, 0).map((m) => m.id);
    for (const cursor of [0, 1, 2, 3, 17, 49, 50, 1000]) {
      expect(state.messagesAfter('a', cursor, 0).map((m) => m.id)).toEqual(all.filter((id) => id > cursor));
      expect(state.messagesAfter('a', cursor, 4).map((m) => m.id)).toEqual(
        all.filter((id) => id > cursor).slice(0, 4),
      );
    }
    expect(state.messagesAfter('missing', 0, 0)).toEqual([]);
  });

  it('keeps status counts and the need-human total in step with transitions', () => {
    const { state } = makeState();
    state.createConversation({ id: 'a' });
    state.createConversation({ id: 'b', needHuman: true });
    expect(state.countByStatus()).toMatchObject({ 'Belum Ditangani': 1, 'Butuh CS': 1 });
    expect(state.needHumanTotal()).toBe(1);
    state.markNeedHuman('a');
    state.markNeedHuman('a');
    expect(state.needHumanTotal()).toBe(2);
    state.done('b');
    expect(state.needHumanTotal()).toBe(1);
    expect(state.countByStatus()).toMatchObject({ 'Butuh CS': 1, Selesai: 1, 'Belum Ditangani': 0 });
  });

  it('emits events for customer, AI and agent messages and take-over, not for API sends or notes', () => {
    const { state, events } = makeState();
    state.createConversation({ id: 'a' });
    state.addCustomerMessage('a', { content: { kind: 'text', text: 'x' } });
    state.addAiReply('a', 'y');
    state.sendFromApi('a', { kind: 'text', text: 'z' }, null);
    state.addNote('a', 'n');
    state.takeOver('a');
    state.takeOver('a');
    state.addAgentReply('a', 'w');
    expect(events.map((e) => e.kind)).toEqual(['customer_message', 'ai_reply', 'assigned', 'agent_reply']);
  });

  it('flags outbound messages outside the 24-hour window on the business API', () => {
    const { state, outbound, tick } = makeState();
    state.createConversation({ id: 'a', channel: { type: 'whatsapp_api' } });
    state.addAgentReply('a', 'before any customer message');
    state.addCustomerMessage('a', { content: { kind: 'text', text: 'x' } });
    tick(24 * 3_600_000 - 1);
    state.addAgentReply('a', 'just before 24 h');
    tick(1);
    // The window closes at exactly 24 hours (strict reading of "within 24 hours").
    state.addAgentReply('a', 'exactly 24 h later');
    expect(outbound.map(([, outside]) => outside)).toEqual([true, false, true]);
  });
});
