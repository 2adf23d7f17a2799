import { z } from 'zod';

const ISO_WITH_ZONE = z.iso.datetime({ offset: true });
const DATE_PART = /^(\d{4})-(\d{2})-(\d{2})T/;

/**
 * An instant as the CLI and rule-test files take it: ISO-8601 with a zone (`Z` or `+07:00`), a
 * date that exists. `new Date('2026-02-30T00:00:00Z')` is 2026-03-02 in V8, so `explain --now`
 * ran at a day nobody asked for while a test file refused the same text; both use this
 * reading now. `why` is the reason in words, for a message that names the flag or field.
 */
export function parseInstant(text: string): { ok: true; date: Date } | { ok: false; why: string } {
  if (ISO_WITH_ZONE.safeParse(text).success) return { ok: true, date: new Date(text) };
  const date = DATE_PART.exec(text);
  if (date && /T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(text)) {
    return { ok: false, why: `${date[1]}-${date[2]}-${date[3]} is not a date of the calendar` };
  }
  return { ok: false, why: 'not an ISO-8601 instant with a zone' };
}
