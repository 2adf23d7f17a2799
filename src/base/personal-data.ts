/**
 * Finding personal data in free text: e-mail addresses, payment card numbers, Indonesian
 * identity numbers (NIK) and phone numbers. Pure functions; each `mask*` keeps the text's shape
 * (separators, length, `@` and dots) and replaces every letter and digit of what it found by `#`,
 * so that a backtest's regex over "an address was here" still sees one.
 *
 * Order matters when several run: addresses first (they may hold digit runs), then cards and NIKs
 * (they need their digits to pass their checks), then phones, whose pattern takes any run of 7 or
 * more digits and would leave nothing for the others to recognise.
 */

/** A character that makes a number part of a word (`INV4111...`, `order_3201...`). */
const WORD_CHAR = /[\p{L}\p{N}_]/u;

const MASK = /[\p{L}\p{N}]/gu;
const maskAll = (found: string): string => found.replace(MASK, '#');

/**
 * `local@domain.tld`: the local part as RFC 5321 dot-atoms are written in practice (letters,
 * digits, `. _ % + -`, so `name+tag@` too), a domain of one or more labels and a final label of at
 * least two letters (`mail.example.co.id`).
 */
const EMAIL =
  /(?<![\p{L}\p{N}._%+-])[\p{L}\p{N}._%+-]+@(?:[\p{L}\p{N}](?:[\p{L}\p{N}-]*[\p{L}\p{N}])?\.)+\p{L}{2,}(?![\p{L}\p{N}-])/gu;

export function maskEmails(text: string): string {
  return text.includes('@') ? text.replace(EMAIL, maskAll) : text;
}

/** Luhn (ISO/IEC 7812-1) over a string of digits. */
export function passesLuhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i += 1) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return digits.length > 0 && sum % 10 === 0;
}

const CARD_SEPARATORS = /^[ -]$/;
const NIK_SEPARATORS = /^[ .-]$/;

/** A card number: 13 to 19 digits that pass the Luhn check. */
export function isCardNumber(digits: string): boolean {
  return /^\d{13,19}$/.test(digits) && passesLuhn(digits);
}

/**
 * Province codes (the first two digits of a NIK), per Kemendagri's area codes: Sumatra 11-19 and
 * 21, Java 31-36, Bali and Nusa Tenggara 51-53, Kalimantan 61-65, Sulawesi 71-76, Maluku 81-82,
 * Papua 91-97 (including the provinces formed in 2022). Other two-digit starts are not NIKs.
 */
const PROVINCES = new Set([
  11, 12, 13, 14, 15, 16, 17, 18, 19, 21, 31, 32, 33, 34, 35, 36, 51, 52, 53, 61, 62, 63, 64, 65, 71, 72, 73,
  74, 75, 76, 81, 82, 91, 92, 93, 94, 95, 96, 97,
]);
const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * A NIK (Nomor Induk Kependudukan): 16 digits `PP RR DD DDMMYY SSSS`: province (a known code),
 * regency or city (01-99), district (01-99), date of birth with 40 added to the day for women
 * (01-31 or 41-71, a day the month has; the year has two digits, so 29 February always passes),
 * and a serial number 0001-9999. What is checked is all the structure there is: a NIK has no
 * check digit, so a 16-digit number that happens to fit is taken for one.
 */
export function isNik(digits: string): boolean {
  if (!/^\d{16}$/.test(digits)) return false;
  const part = (from: number) => Number(digits.slice(from, from + 2));
  if (!PROVINCES.has(part(0)) || part(2) === 0 || part(4) === 0) return false;
  const rawDay = part(6);
  const day = rawDay > 40 ? rawDay - 40 : rawDay;
  const month = part(8);
  if (month < 1 || month > 12 || day < 1 || day > (DAYS_IN_MONTH[month - 1] ?? 0)) return false;
  return digits.slice(12) !== '0000';
}

/** A run of digit groups joined by single separators, e.g. `4111 1111 1111 1111` or `0812-3456`. */
const DIGIT_RUN = /\d+(?:[ .-]\d+)*/g;

interface Group {
  start: number;
  end: number;
  digits: string;
}

/**
 * Masks numbers that `accept` takes: within each run of digit groups, the longest sequence of
 * whole groups, joined only by `separators`, whose digits it accepts, tried from each group in
 * turn; a number that is part of a word (`INV4111111111111111`) is left alone.
 */
function maskNumbers(
  text: string,
  separators: RegExp,
  accept: (digits: string) => boolean,
  lengths: { min: number; max: number },
): string {
  let out = '';
  let copied = 0;
  for (const run of text.matchAll(DIGIT_RUN)) {
    const inWord = startsInsideWord(text, run.index);
    const groups: Group[] = [];
    for (const group of run[0].matchAll(/\d+/g)) {
      const start = run.index + group.index;
      groups.push({ start, end: start + group[0].length, digits: group[0] });
    }
    for (let i = 0; i < groups.length; ) {
      // A run that starts inside a word goes on as part of it up to the first space.
      const start = (groups[i] as Group).start;
      const partOfWord = inWord && (i === 0 || !/ /.test(text.slice(run.index, start)));
      const found = partOfWord ? undefined : longestAccepted(text, groups, i, separators, accept, lengths);
      if (found === undefined) {
        i += 1;
        continue;
      }
      const from = (groups[i] as Group).start;
      const to = (groups[found] as Group).end;
      out += text.slice(copied, from) + maskAll(text.slice(from, to));
      copied = to;
      i = found + 1;
    }
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/**
 * A run of digits glued to a letter or `_` before it: part of a word (`INV4111...`), or of an
 * identifier up to the next space (the run `601-1795699468439` of the dead-letter id
 * `...-14d2f601-1795699468439`, whose millisecond timestamp may pass Luhn). A `-` after a word
 * does not glue: `KTP-3201...` is a label and a number.
 */
function startsInsideWord(text: string, at: number): boolean {
  return WORD_CHAR.test(text.charAt(at - 1));
}

/** Digits followed by a letter, digit or `_`. */
function endsInsideWord(text: string, at: number): boolean {
  return WORD_CHAR.test(text.charAt(at));
}

function longestAccepted(
  text: string,
  groups: readonly Group[],
  first: number,
  separators: RegExp,
  accept: (digits: string) => boolean,
  lengths: { min: number; max: number },
): number | undefined {
  let digits = '';
  let best: number | undefined;
  for (let j = first; j < groups.length; j += 1) {
    const group = groups[j] as Group;
    if (j > first && !separators.test(text.slice((groups[j - 1] as Group).end, group.start))) break;
    digits += group.digits;
    if (digits.length > lengths.max) break;
    const glued = endsInsideWord(text, group.end);
    if (digits.length >= lengths.min && !glued && accept(digits)) best = j;
  }
  return best;
}

/** Masks payment card numbers: 13-19 digits, single spaces or dashes between them, Luhn-valid. */
export function maskCardNumbers(text: string): string {
  return maskNumbers(text, CARD_SEPARATORS, isCardNumber, { min: 13, max: 19 });
}

/** Masks Indonesian identity numbers (see isNik): 16 digits, single spaces, dots or dashes between. */
export function maskNiks(text: string): string {
  return maskNumbers(text, NIK_SEPARATORS, isNik, { min: 16, max: 16 });
}

/**
 * Phone numbers: seven or more digits with an optional leading `+` and single spaces, dots or
 * dashes between (`+62 812-3456-7890`, `0812.3456.7890`, `6281234567890`), or a bracketed area
 * code first (`(021) 555-1234`). Any run of 7 digits counts, inside words too: what the logs
 * masked before this module existed, kept so that recorded events read as they did.
 */
const PHONE = /\+?\d(?:[ .-]?\d){6,}|\(\+?\d{2,4}\)[ .-]?\d(?:[ .-]?\d){5,}/g;

export function maskPhoneNumbers(text: string): string {
  return text.replace(PHONE, maskAll);
}

export interface PersonalDataKinds {
  phones: boolean;
  emails: boolean;
  cards: boolean;
  nationalIds: boolean;
}

export const ALL_PERSONAL_DATA: PersonalDataKinds = {
  phones: true,
  emails: true,
  cards: true,
  nationalIds: true,
};

/** Masks the kinds asked for, in the order that lets each be recognised (see the file's comment). */
export function maskPersonalData(text: string, kinds: PersonalDataKinds = ALL_PERSONAL_DATA): string {
  let out = text;
  if (kinds.emails) out = maskEmails(out);
  if (kinds.cards) out = maskCardNumbers(out);
  if (kinds.nationalIds) out = maskNiks(out);
  if (kinds.phones) out = maskPhoneNumbers(out);
  return out;
}
