/**
 * Text as the keyword matcher sees it: Unicode NFD with combining marks removed, lower-cased,
 * split into words of letters and digits. "Kécéwa!!" -> ["kecewa"]; "I don't know" ->
 * ["i", "don", "t", "know"]. Keywords go through the same function, so both sides agree on what
 * a word is and "refundable" is one word that is not "refund".
 */
const MARKS = /\p{M}+/gu;
const WORD = /[\p{L}\p{N}]+/gu;

export function normalizeWords(text: string): string[] {
  return text.toLowerCase().normalize('NFD').replace(MARKS, '').match(WORD) ?? [];
}
