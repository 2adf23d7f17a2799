import { describe, expect, it } from 'vitest';
import { preview } from '../../../src/platform/parse-responses.js';
import { CUT, quotePlatformText, sentTexts } from '../../../src/platform/quote-platform-text.js';

/** Issue 27: what the platform answers is quoted without what we sent and without personal data. */
const SENT = 'Halo Siti Rahmawati, pesanan #123 untuk Jl. Melati 5 sudah dikirim.';

describe('quotePlatformText', () => {
  it.each([
    ['the whole text echoed', `message rejected: ${SENT}`, `message rejected: ${CUT}`],
    ['the text echoed in quotes', `invalid text "${SENT}" (too long)`, `invalid text "${CUT}" (too long)`],
    [
      'a truncated echo (the platform cut it short)',
      `text too long: ${SENT.slice(0, 30)}...`,
      `text too long: ${CUT}...`,
    ],
    [
      'two stretches of the text with the platform words between',
      'cannot send "Halo Siti Rahmawati" ... "sudah dikirim." to this channel',
      `cannot send "${CUT}" ... "${CUT}" to this channel`,
    ],
    [
      'whitespace flattened as the client flattens it',
      'rejected: Halo Siti Rahmawati, pesanan #123',
      `rejected: ${CUT}`,
    ],
    ['the platform words alone are kept', 'Data tidak valid', 'Data tidak valid'],
    ['a stretch shorter than 8 characters is not an echo', 'pesan not allowed', 'pesan not allowed'],
  ])('%s', (_name, text, expected) => {
    expect(quotePlatformText(text, [SENT])).toBe(expected);
  });

  it('a short text (a name) is cut where it stands as a word, not inside words', () => {
    expect(quotePlatformText('note for Siti refused (Sitiawan is fine)', ['Siti'])).toBe(
      `note for ${CUT} refused (Sitiawan is fine)`,
    );
  });

  it('masks personal data the platform adds of its own', () => {
    expect(
      quotePlatformText('customer siti@mail.co.id (+62 812-3456-7890, card 4111 1111 1111 1111) blocked', []),
    ).toBe('customer ####@####.##.## (+## ###-####-####, card #### #### #### ####) blocked');
  });

  it('sentTexts takes the strings that may hold customer data, not ids or media types', () => {
    expect(
      sentTexts({
        conversation_id: 'c-1',
        text: 'Halo Siti',
        reply_to_message_id: 'm-9',
        media: {
          url: 'https://cdn.example.com/a.pdf',
          type: 'document',
          mime_type: 'application/pdf',
          caption: 'Invoice Siti',
        },
      }),
    ).toEqual(['Halo Siti', 'https://cdn.example.com/a.pdf', 'Invoice Siti']);
    expect(sentTexts({ conversation_id: 'c-1', note: 'Catatan' })).toEqual(['Catatan']);
    expect(sentTexts(undefined)).toEqual([]);
  });
});

describe('preview: a body described, never quoted', () => {
  const body = (text: string) => {
    try {
      return { text, json: JSON.parse(text) as unknown };
    } catch {
      return { text, json: undefined };
    }
  };
  it.each([
    ['{"ok":1,"echo":"Halo Siti, HP 0812 3456 7890"}', 'a JSON object {ok: number, echo: string}'],
    ['{"data":{"list":[{"message":"Halo Siti"}]}}', 'a JSON object {data: object}'],
    ['[{"message":"Halo Siti"}]', 'a JSON list of 1 item(s)'],
    ['"Halo Siti"', 'a JSON string'],
    ['<html><body>Halo Siti</body></html>', 'an HTML page of 35 characters'],
    ['Halo Siti, HP 0812 3456 7890', 'a text of 28 characters'],
    ['   ', 'an empty body'],
    [
      JSON.stringify(Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`k${i}`, i]))),
      'a JSON object {k0: number, k1: number, k2: number, k3: number, k4: number, k5: number, k6: number, k7: number, ... (10 keys)}',
    ],
  ])('%s', (text, expected) => {
    expect(preview(body(text))).toBe(expected);
  });
});
