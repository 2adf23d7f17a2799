import { webhookIdFor } from '../../../src/forward/forward-event.js';

/**
 * What the example config's rules (config/bridge.example.yaml) must do with the suite's traffic,
 * worked out from the messages alone, and the comparison with what the platform and the CRM saw.
 * Pure: scenarios collect the observations, this decides what is missing and what is repeated.
 */
export type MessageKind = 'complaint' | 'catalog' | 'neutral';

/** Complaint texts with exactly one keyword each, so `{{match.keyword}}` is known in advance. */
const COMPLAINTS: readonly (readonly [string, string])[] = [
  ['Saya mau refund untuk pesanan kemarin', 'refund'],
  ['Barang rusak, saya kecewa', 'kecewa'],
  ['Saya mau komplain soal pengiriman', 'komplain'],
  ['Saya marah sekali, paket hilang', 'marah'],
  ['Pelayanan lambat, saya tidak puas', 'tidak puas'],
];
const CATALOGS = ['Kirim katalog ya', 'Boleh minta catalog terbaru?', 'Ada katalog produk baru?'];
const NEUTRALS = ['Halo, apa kabar?', 'Pesanan saya sampai kapan?', 'Oke, ditunggu', 'Alamat toko di mana?'];

export const CATALOG_URL = 'https://cdn.example.com/katalog.pdf';
export const NOTE_PREFIX = 'Escalated by escalate-complaints: customer wrote ';
const AFTER_HOURS = /^Terima kasih .*! Tim kami kembali pada jam kerja\.$/;

export interface PlannedMessage {
  conversationId: string;
  kind: MessageKind;
  text: string;
  /** The note the escalation writes (complaints only). */
  note: string | null;
}

/** A message of a kind; `n` picks among the texts (deterministic for a given n). */
export function messageOf(conversationId: string, kind: MessageKind, n: number): PlannedMessage {
  if (kind === 'complaint') {
    const [text, keyword] = COMPLAINTS[n % COMPLAINTS.length] ?? ['refund', 'refund'];
    return { conversationId, kind, text, note: `${NOTE_PREFIX}'${keyword}'` };
  }
  const texts = kind === 'catalog' ? CATALOGS : NEUTRALS;
  return { conversationId, kind, text: texts[n % texts.length] ?? 'Halo', note: null };
}

export interface SentMessage extends PlannedMessage {
  /** The platform's message id (the webhook's `message.id`). */
  messageId: string;
}

export function eventKeyOf(message: { messageId: string }): string {
  return `channel.message_in|${message.messageId}`;
}

/** The CRM `webhook-id` of a complaint's forward (stable per event and action). */
export function forwardIdOf(message: { messageId: string }): string {
  return webhookIdFor(`${eventKeyOf(message)}|escalate-complaints#2`);
}

export interface ExpectedConversation {
  /** Escalation notes, in the order of the messages. */
  notes: string[];
  needHuman: boolean;
  catalogReplies: number;
  /** After-hours replies: once per conversation (12h) for a non-complaint message while closed. */
  afterHoursReplies: number;
  /** Forward ids (one per complaint) and escalation timers (one per complaint). */
  forwardIds: string[];
  timers: number;
}

/** The example rules on one conversation's messages, in order; `hours` is the business-hours state. */
export function expectConversation(
  messages: readonly SentMessage[],
  hours: 'open' | 'closed',
): ExpectedConversation {
  const complaints = messages.filter((m) => m.kind === 'complaint');
  const nonComplaints = messages.length - complaints.length;
  return {
    notes: complaints.map((m) => m.note ?? ''),
    needHuman: complaints.length > 0,
    catalogReplies: messages.filter((m) => m.kind === 'catalog').length,
    afterHoursReplies: hours === 'closed' && nonComplaints > 0 ? 1 : 0,
    forwardIds: complaints.map(forwardIdOf),
    timers: complaints.length,
  };
}

/** What the business side sent into a conversation, read from the platform's history. */
export interface ObservedMessage {
  origin: string;
  text: string;
  deliveryStatus: string;
}

export interface ObservedConversation {
  messages: readonly ObservedMessage[];
  needHuman: boolean;
  timers: number;
}

/** Action counts over a scenario, and the differences found. */
export interface Tally {
  expectedNotes: number;
  notes: number;
  expectedReplies: number;
  replies: number;
  needHumanMarked: number;
  expectedNeedHuman: number;
  expectedTimers: number;
  timers: number;
  missing: number;
  repeated: number;
  outOfOrder: number;
  problems: string[];
}

export function emptyTally(): Tally {
  return {
    expectedNotes: 0,
    notes: 0,
    expectedReplies: 0,
    replies: 0,
    needHumanMarked: 0,
    expectedNeedHuman: 0,
    expectedTimers: 0,
    timers: 0,
    missing: 0,
    repeated: 0,
    outOfOrder: 0,
    problems: [],
  };
}

const PROBLEMS_KEPT = 20;

function note(tally: Tally, problem: string) {
  if (tally.problems.length < PROBLEMS_KEPT) tally.problems.push(problem);
}

function countDifference(tally: Tally, conversationId: string, what: string, want: number, got: number) {
  if (got < want) {
    tally.missing += want - got;
    note(tally, `${conversationId}: ${want - got} ${what} missing (expected ${want}, found ${got})`);
  } else if (got > want) {
    tally.repeated += got - want;
    note(tally, `${conversationId}: ${got - want} ${what} repeated (expected ${want}, found ${got})`);
  }
}

/** Compares one conversation and adds to the tally. */
export function compareConversation(
  tally: Tally,
  conversationId: string,
  expected: ExpectedConversation,
  observed: ObservedConversation,
): void {
  const notes = observed.messages.filter((m) => m.origin === 'note').map((m) => m.text);
  const replies = observed.messages.filter((m) => m.origin === 'api');
  const catalog = replies.filter((m) => m.text === CATALOG_URL).length;
  const afterHours = replies.filter((m) => AFTER_HOURS.test(m.text)).length;
  const strange = replies.length - catalog - afterHours;

  tally.expectedNotes += expected.notes.length;
  tally.notes += notes.length;
  tally.expectedReplies += expected.catalogReplies + expected.afterHoursReplies;
  tally.replies += replies.length;
  tally.expectedTimers += expected.timers;
  tally.timers += observed.timers;
  if (expected.needHuman) tally.expectedNeedHuman += 1;
  if (observed.needHuman) tally.needHumanMarked += 1;

  // Notes as a multiset first (missing / repeated), then their order.
  const want = new Map<string, number>();
  for (const text of expected.notes) want.set(text, (want.get(text) ?? 0) + 1);
  const got = new Map<string, number>();
  for (const text of notes) got.set(text, (got.get(text) ?? 0) + 1);
  for (const text of new Set([...want.keys(), ...got.keys()])) {
    countDifference(tally, conversationId, `note "${text}"`, want.get(text) ?? 0, got.get(text) ?? 0);
  }
  if (
    notes.length === expected.notes.length &&
    notes.some((text, i) => text !== expected.notes[i]) &&
    [...want].every(([text, n]) => got.get(text) === n)
  ) {
    tally.outOfOrder += 1;
    note(tally, `${conversationId}: notes out of order: ${JSON.stringify(notes)}`);
  }
  countDifference(tally, conversationId, 'catalog reply', expected.catalogReplies, catalog);
  countDifference(tally, conversationId, 'after-hours reply', expected.afterHoursReplies, afterHours);
  if (strange > 0) {
    tally.repeated += strange;
    note(tally, `${conversationId}: ${strange} unexpected message(s) sent`);
  }
  if (expected.needHuman !== observed.needHuman) {
    if (expected.needHuman) tally.missing += 1;
    else tally.repeated += 1;
    note(tally, `${conversationId}: need-human is ${observed.needHuman}, expected ${expected.needHuman}`);
  }
  countDifference(tally, conversationId, 'escalation timer', expected.timers, observed.timers);
}

export interface ForwardTally {
  expected: number;
  distinct: number;
  total: number;
  /** Forwards whose webhook-id belongs to no expected action. */
  unknown: number;
  missing: number;
  /** Same webhook-id delivered more than once (a CRM deduping on it sees one). */
  resent: number;
  unsigned: number;
}

/** Forwards by webhook-id: one per complaint, nothing else. */
export function compareForwards(
  expectedIds: readonly string[],
  seen: readonly { webhookId: string; verified: boolean }[],
): ForwardTally {
  const expected = new Set(expectedIds);
  const counts = new Map<string, number>();
  for (const forward of seen) counts.set(forward.webhookId, (counts.get(forward.webhookId) ?? 0) + 1);
  let unknown = 0;
  for (const id of counts.keys()) if (!expected.has(id)) unknown += 1;
  let missing = 0;
  for (const id of expected) if (!counts.has(id)) missing += 1;
  return {
    expected: expected.size,
    distinct: counts.size,
    total: seen.length,
    unknown,
    missing,
    resent: seen.length - counts.size,
    unsigned: seen.filter((f) => !f.verified).length,
  };
}
