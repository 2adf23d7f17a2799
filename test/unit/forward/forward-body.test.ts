import { describe, expect, it } from 'vitest';
import { FORWARD_FIELDS } from '../../../src/config/config-schema.js';
import { type ForwardBody, selectForwardFields } from '../../../src/forward/forward-body.js';
import { makeEvent } from '../../support/make-event.js';

/** Issue 27: destinations.NAME.fields picks what of the event a CRM receives. */
const body: ForwardBody = {
  type: 'convo_bridge.event',
  rule: 'escalate',
  action: 'escalate#2',
  event: makeEvent({ text: 'Halo, saya Siti', senderName: 'Siti', conversationLabel: 'Siti' }),
};

describe('selectForwardFields', () => {
  it('no fields named (null): the body as it is', () => {
    expect(selectForwardFields(body, null)).toBe(body);
  });

  it('named fields: the envelope and only those fields of the event', () => {
    const sent = selectForwardFields(body, ['kind', 'conversationId', 'channel', 'occurredAt']);
    expect(sent).toEqual({
      type: 'convo_bridge.event',
      rule: 'escalate',
      action: 'escalate#2',
      event: {
        kind: 'message_in',
        conversationId: 'conv-1',
        channel: body.event.channel,
        occurredAt: body.event.occurredAt,
      },
    });
    expect(JSON.stringify(sent)).not.toContain('Siti');
  });

  it('a field the event lacks (rawEngine of an old job is optional) is left out, a null one kept', () => {
    const sent = selectForwardFields(body, ['messageId', 'aiName']);
    expect(sent.event).toEqual({ messageId: body.event.messageId, aiName: null });
  });

  it('every field named: the same event', () => {
    expect(selectForwardFields(body, FORWARD_FIELDS).event).toEqual(body.event);
  });
});
