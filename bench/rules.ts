/**
 * Rules evaluation benchmark: time per event with 10, 100, 1,000 and 10,000 keyword rules.
 * Pure evaluation only (no I/O). Bounded: at most MAX_EVENTS evaluations or MAX_MS per size.
 *
 *   npm run bench:rules            # prints a table, writes bench/results/rules.json
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { configSchema } from '../src/config/config-schema.js';
import type { ConversationEvent } from '../src/events/conversation-event.js';
import { compileRules } from '../src/rules/compile-rules.js';
import { evaluateRules } from '../src/rules/evaluate-rules.js';
import type { ConversationFacts } from '../src/rules/plan.js';

const SIZES = [10, 100, 1_000, 10_000];
const WARMUP = 10_000;
const MAX_EVENTS = 30_000;
const MAX_MS = 4_000;

const FILLER =
  'halo kak saya mau tanya apakah barangnya masih ada stok warna biru ukuran besar kapan bisa dikirim ke jakarta terima kasih ya'.split(
    ' ',
  );

/** Three keywords per rule: two words and a two-word phrase, all distinct across rules. */
function keywordsOf(i: number): string[] {
  return [`produk${i}x`, `kode${i}z`, `paket ${i}q`];
}

function buildRules(count: number) {
  const rules = Array.from({ length: count }, (_, i) => ({
    name: `keyword-rule-${i}`,
    on: 'message_in',
    if: { text: { any_keywords: keywordsOf(i) } },
    // biome-ignore lint/suspicious/noThenProperty: `then` is the rules language's word for a rule's actions.
    then: [{ note: 'matched {{match.keyword}} for {{customer.name}}' }, { need_human: true }],
  }));
  const config = configSchema.parse({
    platform: { base_url: 'https://api.example.com', auth: { business_id: 'b', secret: 's' } },
    receiver: { secrets: ['w'] },
    rules,
  });
  const compiled = compileRules(config);
  if (compiled.problems.length > 0) throw new Error(compiled.problems.map((p) => p.message).join('\n'));
  return compiled.rules;
}

/** 200 customer messages of 20-40 words; every other one names one keyword of some rule. */
function buildEvents(ruleCount: number): ConversationEvent[] {
  const events: ConversationEvent[] = [];
  let seed = 42;
  const random = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed / 2_147_483_648;
  };
  for (let n = 0; n < 200; n++) {
    const words = Array.from(
      { length: 20 + Math.floor(random() * 20) },
      () => FILLER[Math.floor(random() * FILLER.length)],
    );
    if (n % 2 === 0) {
      const keyword = keywordsOf(Math.floor(random() * ruleCount))[n % 3] ?? '';
      words.splice(Math.floor(random() * words.length), 0, keyword.toUpperCase());
    }
    const at = new Date(Date.UTC(2026, 10, 23, 3, 0, n)).toISOString();
    events.push({
      v: 1,
      kind: 'message_in',
      name: 'channel.message_in',
      key: `channel.message_in|m${n}`,
      conversationId: `conv-${n}`,
      messageId: `m${n}`,
      text: `${words.join(' ')}!`,
      caption: '',
      contentType: 'text',
      attachments: [],
      channel: { id: 'ch_1', name: 'WhatsApp', engine: 'whatsapp' },
      business: { id: 'b', name: 'Toko' },
      senderName: 'Budi',
      conversationLabel: 'Budi',
      aiName: null,
      agentName: null,
      needHuman: false,
      occurredAt: at,
      receivedAt: at,
    });
  }
  return events;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

interface Timing {
  events: number;
  meanUs: number;
  p50Us: number;
  p99Us: number;
  eventsPerSecond: number;
}

interface Row extends Timing {
  rules: number;
  keywords: number;
  compileMs: number;
  matchedPerEvent: number;
  /** The same, also reading plan.outcomes (one entry per rule, built on first read). */
  withOutcomes: Timing;
}

const round1 = (n: number) => Math.round(n * 10) / 10;

/** Times `evaluate` over the events, bounded by MAX_EVENTS and MAX_MS. */
function measure(events: readonly ConversationEvent[], evaluate: (event: ConversationEvent) => void): Timing {
  for (let i = 0; i < WARMUP; i++) evaluate(events[i % events.length] as ConversationEvent);
  const samples: number[] = [];
  const started = performance.now();
  for (let i = 0; i < MAX_EVENTS && performance.now() - started < MAX_MS; i++) {
    const event = events[i % events.length] as ConversationEvent;
    const t0 = performance.now();
    evaluate(event);
    samples.push(performance.now() - t0);
  }
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = samples.reduce((sum, v) => sum + v, 0) / samples.length;
  return {
    events: samples.length,
    meanUs: round1(mean * 1000),
    p50Us: round1(percentile(sorted, 50) * 1000),
    p99Us: round1(percentile(sorted, 99) * 1000),
    eventsPerSecond: Math.round(1000 / mean),
  };
}

const facts: ConversationFacts = {
  lastCustomerMessageAt: null,
  isFirstCustomerMessage: false,
  onceMarks: {},
};
const now = new Date('2026-11-23T03:00:00Z');
const results: Row[] = [];

// Warm the JIT on a mid-sized set first so the smallest set is not measured cold.
{
  const rules = buildRules(100);
  const events = buildEvents(100);
  measure(events, (event) => evaluateRules(rules, event, facts, now));
}

for (const size of SIZES) {
  const compileStarted = performance.now();
  const rules = buildRules(size);
  const compileMs = performance.now() - compileStarted;
  const events = buildEvents(size);
  let matched = 0;
  for (const event of events) if (evaluateRules(rules, event, facts, now).actions.length > 0) matched += 1;
  const plan = measure(events, (event) => {
    evaluateRules(rules, event, facts, now);
  });
  const withOutcomes = measure(events, (event) => {
    if (evaluateRules(rules, event, facts, now).outcomes.length !== size) throw new Error('outcome count');
  });
  results.push({
    rules: size,
    keywords: size * 3,
    compileMs: Math.round(compileMs),
    ...plan,
    matchedPerEvent: Math.round((matched / events.length) * 100) / 100,
    withOutcomes,
  });
}

const first = results[0];
const last = results[results.length - 1];
const ratioOf = (pick: (row: Row) => number) =>
  first && last ? Math.round((pick(last) / pick(first)) * 100) / 100 : Number.NaN;
const ratio = { mean: ratioOf((r) => r.meanUs), p50: ratioOf((r) => r.p50Us) };
const ratioWithOutcomes = {
  mean: ratioOf((r) => r.withOutcomes.meanUs),
  p50: ratioOf((r) => r.withOutcomes.p50Us),
};

console.log(
  'rules evaluation, pure, per event (3 keywords per rule; 20-40 word messages, half name a keyword)\n',
);
console.log(
  '| rules  | keywords | compile ms | mean µs | p50 µs | p99 µs | events/s | + outcomes: mean µs | p99 µs | events/s |',
);
console.log(
  '|-------:|---------:|-----------:|--------:|-------:|-------:|---------:|--------------------:|-------:|---------:|',
);
for (const r of results) {
  const o = r.withOutcomes;
  console.log(
    `| ${String(r.rules).padStart(6)} | ${String(r.keywords).padStart(8)} | ${String(r.compileMs).padStart(10)} | ${r.meanUs.toFixed(1).padStart(7)} | ${r.p50Us.toFixed(1).padStart(6)} | ${r.p99Us.toFixed(1).padStart(6)} | ${String(r.eventsPerSecond).padStart(8)} | ${o.meanUs.toFixed(1).padStart(19)} | ${o.p99Us.toFixed(1).padStart(6)} | ${String(o.eventsPerSecond).padStart(8)} |`,
  );
}
console.log(`\nratio 10,000 vs 10 rules: mean ${ratio.mean}x, p50 ${ratio.p50}x (goal: at most 2x)`);
console.log(
  `reading every rule's outcome as well (one entry per rule): mean ${ratioWithOutcomes.mean}x, p50 ${ratioWithOutcomes.p50}x`,
);

mkdirSync('bench/results', { recursive: true });
writeFileSync(
  'bench/results/rules.json',
  `${JSON.stringify(
    {
      benchmark: 'rules',
      date: new Date().toISOString(),
      node: process.version,
      cpu: cpus()[0]?.model ?? 'unknown',
      cores: cpus().length,
      results,
      ratio10kVs10: { ...ratio, goal: 2 },
      ratio10kVs10WithOutcomes: ratioWithOutcomes,
    },
    null,
    2,
  )}\n`,
);
console.log('wrote bench/results/rules.json');
