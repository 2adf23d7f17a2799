import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { PlannedAction } from '../../../../src/rules/plan.js';
import { echoProbe } from '../../../../src/worker/exactly-once/own-sends.js';
import { SENT_ID_TTL_MS, sentTextKey, staleSentIds } from '../../../../src/worker/exactly-once/sent-marks.js';
import { makeEvent } from '../../../support/make-event.js';

const reply = (text: string): PlannedAction => ({
  id: 'r#0',
  rule: 'r',
  type: 'reply',
  message: { text },
  replyToMessageId: null,
  once: null,
  window: { applies: false, channelKind: null, hours: 24, closesAt: null },
  whenClosed: [],
});

describe('echoProbe', () => {
  it("looks for the message id and for the mark the action's life writes for the same reply text", () => {
    const event = makeEvent({
      kind: 'agent_reply',
      name: 'agent.message_out',
      messageId: 'm-9',
      text: 'Baik  Kak!',
    });
    expect(echoProbe(event)).toEqual(['S:m-9', `R:${sentTextKey(reply('Baik  Kak!'))}`]);
  });

  it('keeps the text mark as earlier releases wrote it (marks in Redis outlive an upgrade)', () => {
    const written = createHash('sha256').update('reply:baik kak').digest('hex').slice(0, 32);
    expect(sentTextKey(reply('Baik  Kak!'))).toBe(written);
    expect(echoProbe(makeEvent({ kind: 'agent_reply', messageId: null, text: 'Baik  Kak!' }))[1]).toBe(
      `R:${written}`,
    );
  });

  it.each(['message_in', 'ai_reply', 'assigned'] as const)('looks for nothing on %s events', (kind) => {
    expect(echoProbe(makeEvent({ kind, text: 'Baik Kak!' }))).toEqual(['', '']);
  });

  it('looks for the id only when the echo has no text, and for the text only when it has no id', () => {
    expect(echoProbe(makeEvent({ kind: 'message_sent', messageId: 'm-1', text: '' }))).toEqual(['S:m-1', '']);
    expect(echoProbe(makeEvent({ kind: 'message_sent', messageId: null, text: 'x' }))[0]).toBe('');
  });
});

describe('staleSentIds', () => {
  it('lists the ids older than the retention', () => {
    const now = 10 * SENT_ID_TTL_MS;
    expect(staleSentIds({ sentIds: { old: now - SENT_ID_TTL_MS - 1, fresh: now - 1_000 } }, now)).toEqual([
      'S:old',
    ]);
  });
});
