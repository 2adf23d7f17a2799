import { describe, expect, it } from 'vitest';
import {
  isCardNumber,
  isNik,
  maskCardNumbers,
  maskEmails,
  maskNiks,
  maskPersonalData,
  maskPhoneNumbers,
  passesLuhn,
} from '../../../src/base/personal-data.js';

describe('e-mail addresses', () => {
  it.each([
    ['tulis ke siti.rahma+order@mail.example.co.id ya', 'tulis ke ####.#####+#####@####.#######.##.## ya'],
    ['Budi@Toko-Maju.com.', '####@####-####.###.'],
    ['email:budi_99@x.id, cc ani%lab@sub.domain.org', 'email:####_##@#.##, cc ###%###@###.######.###'],
    ['<rina.s@gmail.com>', '<####.#@#####.###>'],
    ['Ádám@példa.hu', '####@#####.##'],
  ])('masks %j', (input, expected) => {
    expect(maskEmails(input)).toBe(expected);
  });

  it.each([
    'no address here',
    'a@b',
    'user@localhost',
    'follow @tokomaju on instagram',
    'harga 10@rp5000',
    'version 1.2@3.4',
  ])('leaves %j alone', (input) => {
    expect(maskEmails(input)).toBe(input);
  });
});

describe('card numbers (Luhn)', () => {
  it.each([
    ['4111111111111111', true],
    ['5500000000000004', true],
    ['378282246310005', true],
    ['4222222222222', true],
    ['6304000000000000018', true],
    ['4111111111111112', false],
    ['5500000000000005', false],
    ['411111111111', false], // 12 digits: too short for a card, whatever Luhn says
    ['63040000000000000000', false], // 20 digits
  ])('isCardNumber(%j) is %s', (digits, expected) => {
    expect(isCardNumber(digits)).toBe(expected);
  });

  it('Luhn: the textbook example passes, a changed digit fails', () => {
    expect(passesLuhn('79927398713')).toBe(true);
    expect(passesLuhn('79927398710')).toBe(false);
    expect(passesLuhn('')).toBe(false);
  });

  it.each([
    ['kartu 4111 1111 1111 1111 ya', 'kartu #### #### #### #### ya'],
    ['4111-1111-1111-1111', '####-####-####-####'],
    ['no:4111111111111111.', 'no:################.'],
    ['amex 3782 822463 10005', 'amex #### ###### #####'],
    ['13 digits 4222222222222', '13 digits #############'],
    ['19 digits 6304 0000 0000 0000 018', '19 digits #### #### #### #### ###'],
    // A card and a phone number in one run of digit groups: the card is found at its groups.
    ['4111 1111 1111 1111 0812 3456 7890', '#### #### #### #### 0812 3456 7890'],
    ['hp 0812 3456 7890 kartu 5500-0000-0000-0004', 'hp 0812 3456 7890 kartu ####-####-####-####'],
    // Luhn is all a card number can be checked by: a Luhn-valid 16-digit number is taken for one.
    ['ref 1234567812345670', 'ref ################'],
    ['after a dot: no.4111111111111111', 'after a dot: no.################'],
    ['kartu 4111 1111 1111 1111.Terima kasih', 'kartu #### #### #### ####.Terima kasih'],
    ['CC-4111111111111111', 'CC-################'],
    // A word with digits before it does not hide a card after a space.
    ['ref A12 4111 1111 1111 1111', 'ref A12 #### #### #### ####'],
  ])('masks %j', (input, expected) => {
    expect(maskCardNumbers(input)).toBe(expected);
  });

  it.each([
    ['Luhn fails', 'kartu 4111 1111 1111 1112'],
    ['inside a word', 'INV4111111111111111'],
    ['letters after it', '4111111111111111abc'],
    ['after an underscore', 'order_4111111111111111'],
    // A dead-letter id ends in a millisecond timestamp; this one passes Luhn.
    ['the end of an identifier', 'dlq show b-mwxl3l8p-2b87b6b88d41-14d2f601-1795699468439'],
    ['two spaces between groups', '4111  1111 1111 1111'],
    ['dots between groups (not how cards are written)', '4111.1111.1111.1111'],
    ['too long a run without separators', '41111111111111111111'],
    ['a phone number', '+62 812-3456-7890'],
  ])('leaves a number alone: %s', (_name, input) => {
    expect(maskCardNumbers(input)).toBe(input);
  });
});

describe('Indonesian identity numbers (NIK)', () => {
  it.each([
    ['3201014508900001', 'a woman born 5 August 1990 (day 45 = 5 + 40)'],
    ['3174051203850002', 'a man born 12 March 1985'],
    ['3201016902920003', 'a woman born 29 February (day 69)'],
    ['1101010101000001', 'Aceh (11), the lowest province code'],
    ['9601010101990001', 'Papua Barat Daya (96), formed in 2022'],
    ['3201017101900001', 'a woman born on the 31st (day 71)'],
  ])('%s is a NIK: %s', (digits) => {
    expect(isNik(digits)).toBe(true);
  });

  it.each([
    ['0001014508900001', 'province 00'],
    ['2001014508900001', 'province 20 is no province'],
    ['9901014508900001', 'province 99 is no province'],
    ['3200014508900001', 'regency 00'],
    ['3201004508900001', 'district 00'],
    ['3201011213900001', 'month 13'],
    ['3201010000900001', 'day 00 and month 00'],
    ['3201013201900001', 'day 32'],
    ['3201014001900001', 'day 40 (neither a man nor a woman)'],
    ['3201017201900001', 'day 72 (a woman on the 32nd)'],
    ['3201013002900001', '30 February'],
    ['3201017104900001', '31 April for a woman (day 71, month 04)'],
    ['3201014508900000', 'serial 0000'],
    ['320101450890001', '15 digits'],
    ['32010145089000011', '17 digits'],
  ])('%s is not a NIK: %s', (digits) => {
    expect(isNik(digits)).toBe(false);
  });

  it.each([
    ['NIK: 3201014508900001', 'NIK: ################'],
    ['nik 3201.01.450890.0001', 'nik ####.##.######.####'],
    ['3201-01-450890-0001', '####-##-######-####'],
    ['KTP-3201014508900001', 'KTP-################'],
    ['KTP 3174 0512 0385 0002 ya', 'KTP #### #### #### #### ya'],
  ])('masks %j', (input, expected) => {
    expect(maskNiks(input)).toBe(expected);
  });

  it.each(['NIK3201014508900001', '3201014508900001x', 'order 3201011213900001', '32010145089000012'])(
    'leaves %j alone',
    (input) => {
      expect(maskNiks(input)).toBe(input);
    },
  );
});

describe('phone numbers (Indonesian formats)', () => {
  it.each([
    ['+62 812-3456-7890', '+## ###-####-####'],
    ['+6281234567890', '+#############'],
    ['+62-812-3456-7890', '+##-###-####-####'],
    ['6281234567890', '#############'],
    ['081234567890', '############'],
    ['0812-3456-7890', '####-####-####'],
    ['0812.3456.7890', '####.####.####'],
    ['0812 3456 7890', '#### #### ####'],
    ['(021) 555-1234', '(###) ###-####'],
    ['(+62) 812 3456 7890', '(+##) ### #### ####'],
    ['WA 0812345678 ya', 'WA ########## ya'],
    // Inside words too: what record.redact.phones did before issue 27.
    ['ref abc0812345678def', 'ref abc##########def'],
  ])('masks %j', (input, expected) => {
    expect(maskPhoneNumbers(input)).toBe(expected);
  });

  it.each(['order 12345', 'ev-0a1b2c3d', 'jam 08.30', 'Rp 150.000'])('leaves %j alone', (input) => {
    expect(maskPhoneNumbers(input)).toBe(input);
  });
});

describe('maskPersonalData: every kind, in an order that lets each be recognised', () => {
  it('an address whose local part is a phone number is masked whole (addresses before phones)', () => {
    expect(maskPersonalData('6281234567890@s.whatsapp.net')).toBe('#############@#.########.###');
  });

  it('masks a text holding all four', () => {
    const text =
      'Saya Siti, HP +62 812-3456-7890, email siti.rahma+order@mail.example.co.id, kartu 4111 1111 1111 1111, NIK 3201014508900001.';
    const masked = maskPersonalData(text);
    expect(masked).toBe(
      'Saya Siti, HP +## ###-####-####, email ####.#####+#####@####.#######.##.##, kartu #### #### #### ####, NIK ################.',
    );
  });

  it('masks only the kinds asked for', () => {
    const text = 'kartu 4111 1111 1111 1111, HP 081234567890, budi@x.id';
    expect(maskPersonalData(text, { phones: false, emails: false, cards: true, nationalIds: false })).toBe(
      'kartu #### #### #### ####, HP 081234567890, budi@x.id',
    );
    expect(maskPersonalData(text, { phones: false, emails: true, cards: false, nationalIds: false })).toBe(
      'kartu 4111 1111 1111 1111, HP 081234567890, ####@#.##',
    );
    expect(maskPersonalData(text, { phones: false, emails: false, cards: false, nationalIds: false })).toBe(
      text,
    );
  });
});
