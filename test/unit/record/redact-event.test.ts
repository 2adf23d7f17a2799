import { describe, expect, it } from 'vitest';
import { type RedactOptions, redactEvent, redactedFields } from '../../../src/record/redact-event.js';
import { makeEvent } from '../../support/make-event.js';

const NONE: RedactOptions = { texts: false, phones: false, emails: false, cards: false, nationalIds: false };
const PERSONAL: RedactOptions = { ...NONE, phones: true, emails: true, cards: true, nationalIds: true };

const event = makeEvent({
  text: 'HP +62 812-3456-7890, siti@mail.co.id, kartu 4111 1111 1111 1111, NIK 3201014508900001',
  caption: 'bukti transfer 5500-0000-0000-0004',
  senderName: 'Siti 081234567890',
  conversationLabel: 'Siti <siti.r@toko.id>',
});

describe('redactEvent (record.redact)', () => {
  it('nothing asked: the same object', () => {
    expect(redactEvent(event, NONE)).toBe(event);
  });

  it('texts: texts and captions replaced, names as they were', () => {
    const out = redactEvent(event, { ...NONE, texts: true });
    expect(out).toMatchObject({
      text: '[redacted]',
      caption: '[redacted]',
      senderName: 'Siti 081234567890',
      conversationLabel: 'Siti <siti.r@toko.id>',
    });
    // An empty text stays empty (no "[redacted]" where there was nothing).
    expect(redactEvent(makeEvent({ caption: '' }), { ...NONE, texts: true }).caption).toBe('');
  });

  it('every personal kind: masked in texts, captions and names; the rest of the event untouched', () => {
    const out = redactEvent(event, PERSONAL);
    expect(out).toEqual({
      ...event,
      text: 'HP +## ###-####-####, ####@####.##.##, kartu #### #### #### ####, NIK ################',
      caption: 'bukti transfer ####-####-####-####',
      senderName: 'Siti ############',
      conversationLabel: 'Siti <####.#@####.##>',
    });
  });

  it('texts and personal kinds together: texts replaced, names masked', () => {
    const out = redactEvent(event, { ...PERSONAL, texts: true });
    expect(out.text).toBe('[redacted]');
    expect(out.senderName).toBe('Siti ############');
  });

  it.each([
    ['phones', 'HP +## ###-####-####, siti@mail.co.id, kartu #### #### #### ####, NIK ################'],
    ['emails', 'HP +62 812-3456-7890, ####@####.##.##, kartu 4111 1111 1111 1111, NIK 3201014508900001'],
    ['cards', 'HP +62 812-3456-7890, siti@mail.co.id, kartu #### #### #### ####, NIK 3201014508900001'],
    ['nationalIds', 'HP +62 812-3456-7890, siti@mail.co.id, kartu 4111 1111 1111 1111, NIK ################'],
  ] as const)('%s alone masks only its kind (a phone mask takes any long digit run)', (kind, text) => {
    expect(redactEvent(event, { ...NONE, [kind]: true }).text).toBe(text);
  });

  it('redactedFields names what a recorded line had, in a fixed order', () => {
    expect(redactedFields(NONE)).toEqual([]);
    expect(redactedFields({ ...PERSONAL, texts: true })).toEqual([
      'texts',
      'phones',
      'emails',
      'cards',
      'national_ids',
    ]);
    expect(redactedFields({ ...NONE, cards: true })).toEqual(['cards']);
  });
});
