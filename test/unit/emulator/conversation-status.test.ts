import { describe, expect, it } from 'vitest';
import {
  aiQuietReason,
  applyStatusTrigger,
  type ConversationFlags,
  type StatusTrigger,
} from '../../../src/emulator/conversation-status.js';

const flags = (
  status: ConversationFlags['status'],
  mode: ConversationFlags['mode'] = 'ai',
  needHuman = false,
) => ({
  status,
  mode,
  needHuman,
});

describe('applyStatusTrigger', () => {
  it.each<[string, ConversationFlags, StatusTrigger, ConversationFlags]>([
    [
      'a customer message makes Ditangani unread',
      flags('Ditangani'),
      { kind: 'customer_message' },
      flags('Belum Dibaca'),
    ],
    [
      'a customer message reopens Selesai',
      flags('Selesai'),
      { kind: 'customer_message' },
      flags('Belum Dibaca'),
    ],
    [
      'Butuh CS stays on a customer message',
      flags('Butuh CS', 'human', true),
      { kind: 'customer_message' },
      flags('Butuh CS', 'human', true),
    ],
    [
      'Diblokir stays on a customer message',
      flags('Diblokir'),
      { kind: 'customer_message' },
      flags('Diblokir'),
    ],
    ['reading an unread one', flags('Belum Dibaca'), { kind: 'read' }, flags('Belum Ditangani')],
    ['reading a handled one changes nothing', flags('Ditangani'), { kind: 'read' }, flags('Ditangani')],
    [
      'AI reply, mark as handled',
      flags('Belum Dibaca'),
      { kind: 'ai_reply', markHandled: true },
      flags('Ditangani'),
    ],
    [
      'AI reply, not marked',
      flags('Belum Dibaca'),
      { kind: 'ai_reply', markHandled: false },
      flags('Belum Ditangani'),
    ],
    ['a reply answers a waiting one', flags('Belum Ditangani'), { kind: 'reply' }, flags('Ditangani')],
    [
      'a reply leaves Butuh CS',
      flags('Butuh CS', 'human', true),
      { kind: 'reply' },
      flags('Butuh CS', 'human', true),
    ],
    ['need-human from any', flags('Selesai'), { kind: 'need_human' }, flags('Butuh CS', 'human', true)],
    [
      'need-human again',
      flags('Butuh CS', 'human', true),
      { kind: 'need_human' },
      flags('Butuh CS', 'human', true),
    ],
    ['take over', flags('Ditangani'), { kind: 'take_over' }, flags('Ditangani', 'human')],
    [
      'return to AI with the customer waiting',
      flags('Butuh CS', 'human', true),
      { kind: 'return_to_ai', customerWaiting: true },
      flags('Belum Ditangani'),
    ],
    [
      'return to AI after a reply',
      flags('Butuh CS', 'human', true),
      { kind: 'return_to_ai', customerWaiting: false },
      flags('Ditangani'),
    ],
    [
      'return to AI in AI mode is a no-op',
      flags('Ditangani'),
      { kind: 'return_to_ai', customerWaiting: true },
      flags('Ditangani'),
    ],
    ['done from any', flags('Butuh CS', 'human', true), { kind: 'done' }, flags('Selesai')],
    ['block', flags('Ditangani', 'human'), { kind: 'block' }, flags('Diblokir', 'human')],
    ['skip', flags('Ditangani'), { kind: 'skip' }, flags('Dilewati')],
  ])('%s', (_case, before, trigger, after) => {
    expect(applyStatusTrigger(before, trigger)).toEqual(after);
  });
});

describe('aiQuietReason', () => {
  it.each<[ConversationFlags, string | undefined]>([
    [flags('Ditangani'), undefined],
    [flags('Belum Dibaca'), undefined],
    [flags('Butuh CS', 'human', true), 'the conversation is marked as needing a human'],
    [flags('Ditangani', 'human'), 'the conversation is handled by a human'],
    [flags('Diblokir'), 'the user is blocked'],
    [flags('Dilewati'), 'the conversation is skipped'],
  ])('%j -> %s', (input, reason) => {
    expect(aiQuietReason(input)).toBe(reason);
  });
});
