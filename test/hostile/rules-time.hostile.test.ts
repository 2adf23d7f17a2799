import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../../src/config/load-config.js';
import type { ConversationEvent } from '../../src/events/conversation-event.js';
import type { CompiledRules } from '../../src/rules/compile-rules.js';
import { evaluateRules } from '../../src/rules/evaluate-rules.js';
import type { ConversationFacts } from '../../src/rules/plan.js';
import { MAX_RENDERED_LENGTH } from '../../src/rules/template.js';
import { doublingRatio, fastestCpuMs } from '../support/cpu-time.js';
import { makeEvent } from '../support/make-event.js';
import { checkProperty, recordRow } from './support/check-property.js';
import { EXAMPLE_ENV, EXAMPLE_TEXT } from './support/config-inputs.js';
import { HOSTILE_SCALE, runsFor } from './support/scale.js';

/**
 * Regexes and templates cannot hang the worker: patterns that make a backtracking engine take
 * exponential time run in linear time (RE2 semantics, re2js), next to a plain pattern as the
 * baseline; templates insert values as text, however large or template-like, and stop at the cap.
 */

const NOW = new Date('2026-03-02T03:00:00.000Z');
const FACTS: ConversationFacts = {
  lastCustomerMessageAt: null,
  isFirstCustomerMessage: false,
  onceMarks: {},
};
/** CPU time for evaluating one event with a 100 KB text, whatever the pattern (measured: well under 1 s). */
const MAX_EVALUATION_MS = 2_000;
const KB = 1024;

/** The example config's platform and receiver, with the given rules instead of the example's. */
function rulesWith(rulesYaml: string): CompiledRules {
  const head = EXAMPLE_TEXT.replace(/\nrules:[\s\S]*$/, '\n');
  return parseConfigText(`${head}rules:\n${rulesYaml}`, { fileName: 'rules.yaml', env: EXAMPLE_ENV }).rules;
}

function regexRules(pattern: string): CompiledRules {
  return rulesWith(
    `  - name: r\n    on: message_in\n    if: { text: { regex: ${JSON.stringify(pattern)} } }\n    then: [ { note: "matched {{match.regex_match}}" } ]\n`,
  );
}

const evaluate = (rules: CompiledRules, event: ConversationEvent) => evaluateRules(rules, event, FACTS, NOW);

interface Pathological {
  pattern: string;
  /** A text that makes a backtracking engine explore every way to split it. */
  text: (length: number) => string;
  why: string;
  /** A length at which JavaScript's own (backtracking) RegExp already takes a fraction of a second (full run only). */
  nativeLength?: number;
}

const PATHOLOGICAL: Pathological[] = [
  { pattern: '(a+)+$', text: (n) => `${'a'.repeat(n - 1)}!`, why: 'nested quantifiers', nativeLength: 23 },
  {
    pattern: '(a|aa)+$',
    text: (n) => `${'a'.repeat(n - 1)}!`,
    why: 'overlapping alternation',
    nativeLength: 33,
  },
  { pattern: '(.*a){20}', text: (n) => `${'a'.repeat(n - 1)}!`, why: 'a repeated greedy group' },
  {
    pattern: '^(a|a?)+$',
    text: (n) => `${'a'.repeat(n - 1)}!`,
    why: 'optional inside a repetition',
    nativeLength: 20,
  },
  {
    pattern: '(\\w+\\s?)+$',
    text: (n) => `${'word '.repeat(Math.floor(n / 5) - 1)}!!!!!`,
    why: 'words and optional spaces',
    nativeLength: 40,
  },
];
const BASELINES: Pathological[] = [
  { pattern: 'refund', text: (n) => `${'a'.repeat(n - 1)}!`, why: 'a plain word (baseline)' },
  { pattern: '(?i)tidak\\s+puas', text: (n) => 'x'.repeat(n), why: 'a plain phrase (baseline)' },
];

/** JavaScript's own backtracking RegExp on short texts, for comparison (it doubles per character). */
function nativeBacktrackingMs(pattern: string, text: (n: number) => string, length: number): number {
  const re = new RegExp(pattern);
  const started = performance.now();
  re.test(text(length));
  return performance.now() - started;
}

describe('regexes and templates cannot hang the worker', () => {
  // The same sizes at every scale: below about 50 KB fixed costs blur the ratio.
  const sizes = [50 * KB, 100 * KB];

  it.for([...PATHOLOGICAL, ...BASELINES])('regex $pattern ($why) is linear in the text', (p, { task }) => {
    const rules = regexRules(p.pattern);
    const [small = 0, large = 0] = sizes;
    const smallEvent = makeEvent({ text: p.text(small) });
    const largeEvent = makeEvent({ text: p.text(large) });
    expect(evaluate(rules, largeEvent).outcomes[0]?.status).toBeDefined();
    evaluate(rules, makeEvent({ text: p.text(small / 4) })); // warm up the JIT
    const {
      small: tSmall,
      large: tLarge,
      ratio,
    } = doublingRatio(
      () => evaluate(rules, smallEvent),
      () => evaluate(rules, largeEvent),
    );
    const native =
      p.nativeLength === undefined || HOSTILE_SCALE < 1
        ? ''
        : `; JavaScript's RegExp takes ${nativeBacktrackingMs(p.pattern, p.text, p.nativeLength).toFixed(0)} ms on ${p.nativeLength} chars (and doubles with each few more)`;
    const line = `regex ${p.pattern}: ${small / KB} KB ${tSmall.toFixed(1)} ms, ${large / KB} KB ${tLarge.toFixed(1)} ms CPU (x${ratio.toFixed(2)})${native}`;
    console.log(line);
    recordRow(task, {
      property: `rules: regex ${p.pattern}, ${large / KB} KB (x${ratio.toFixed(2)} for 2x text)`,
      runs: 2,
      failures: ratio < 3 && tLarge < MAX_EVALUATION_MS ? 0 : 1,
      ms: tSmall + tLarge,
      slowestMs: tLarge,
      clock: 'cpu',
    });
    expect(ratio).toBeLessThan(3);
    expect(tLarge).toBeLessThan(MAX_EVALUATION_MS);
  });

  it('keyword rules on a 1 MB text take time in proportion to the text', ({ task }) => {
    const rules = rulesWith(
      Array.from(
        { length: 200 },
        (_, i) =>
          `  - { name: k${i}, on: message_in, if: { text: { any_keywords: [ "kata${i}", "tidak puas ${i}" ] } }, then: [ { note: "{{match.keyword}}" } ] }`,
      ).join('\n'),
    );
    const words = (bytes: number) =>
      Array.from({ length: Math.floor(bytes / 8) }, (_, i) => `kÉtä${i % 997}`)
        .join(' ')
        .slice(0, bytes);
    const halfEvent = makeEvent({ text: words(512 * KB) });
    const fullEvent = makeEvent({ text: words(1024 * KB) });
    evaluate(rules, makeEvent({ text: words(64 * KB) })); // warm up the JIT
    const {
      small: half,
      large: full,
      ratio,
    } = doublingRatio(
      () => evaluate(rules, halfEvent),
      () => evaluate(rules, fullEvent),
      { repeats: 3 },
    );
    console.log(
      `keywords (200 rules) on 512 KB: ${half.toFixed(0)} ms, 1 MB: ${full.toFixed(0)} ms CPU (x${ratio.toFixed(2)})`,
    );
    recordRow(task, {
      property: `rules: 200 keyword rules, 1 MB text (x${ratio.toFixed(2)} for 2x text)`,
      runs: 2,
      failures: ratio < 3 ? 0 : 1,
      ms: half + full,
      slowestMs: full,
      clock: 'cpu',
    });
    expect(ratio).toBeLessThan(3);
    expect(full).toBeLessThan(MAX_EVALUATION_MS * 2);
  });

  const templateRules = rulesWith(
    [
      '  - name: echo',
      '    on: message_in',
      '    then:',
      '      - note: "{{event.text}}"',
      '      - note: "{{event.text}}{{event.caption}}{{customer.name}}{{event.text}}"',
      '      - reply: { text: "Hi {{customer.name}}: {{event.caption}}" }',
    ].join('\n'),
  );
  const capped = (value: string) =>
    value.length > MAX_RENDERED_LENGTH ? `${value.slice(0, MAX_RENDERED_LENGTH - 1)}…` : value;
  const notesOf = (event: ConversationEvent) =>
    evaluate(templateRules, event).actions.flatMap((a) => (a.type === 'note' ? [a.text] : []));

  it.each([
    ['1 MB of "{{"', '{{'.repeat(512 * KB)],
    ['1 MB of "{{event.text}}"', '{{event.text}}'.repeat(75_000)],
    ['an expression', '{{constructor.constructor("return process")().exit(1)}}'],
    ['a prototype path', '{{__proto__.polluted}}{{event.__proto__}}'],
    ['an environment reference', '${SECRET_KEY} $${PATH}'],
    ['1 MB without a closing brace', `{{${'a'.repeat(1024 * KB)}`],
  ])('a text of %s is inserted as text, capped, in bounded time', (_name, text) => {
    const event = makeEvent({ text, caption: text, senderName: text });
    let notes: string[] = [];
    const ms = fastestCpuMs(1, () => {
      notes = notesOf(event);
    });
    expect(notes[0]).toBe(capped(text));
    expect(notes[1]).toBe(capped(`${text}${text}${text}${text}`));
    for (const note of notes) expect(note.length).toBeLessThanOrEqual(MAX_RENDERED_LENGTH);
    expect(ms).toBeLessThan(500);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('any text, caption and name render literally: a value is never read as a template', async ({ task }) => {
    const piece = fc.oneof(
      fc.string({ maxLength: 8 }),
      fc.constantFrom(
        '{{',
        '}}',
        '{{event.text}}',
        '{{customer.name}}',
        '{{match.keyword}}',
        '${X}',
        '{{{{',
        '}}}}',
        '\\{{',
      ),
    );
    const value = fc.oneof(
      { weight: 9, arbitrary: fc.array(piece, { maxLength: 12 }).map((p) => p.join('')) },
      {
        weight: 1,
        arbitrary: fc.tuple(piece, fc.integer({ min: 1_000, max: 20_000 })).map(([p, n]) => p.repeat(n)),
      },
    );
    await checkProperty(
      task,
      'rules: templates render values literally',
      fc.record({ text: value, caption: value, senderName: value }),
      ({ text, caption, senderName }) => {
        const event = makeEvent({ text, caption, senderName });
        const plan = evaluate(templateRules, event);
        const notes = plan.actions.flatMap((a) => (a.type === 'note' ? [a.text] : []));
        expect(notes[0]).toBe(capped(text));
        expect(notes[1]).toBe(capped(`${text}${caption}${senderName}${text}`));
        const reply = plan.actions.find((a) => a.type === 'reply');
        if (reply?.type === 'reply' && 'text' in reply.message) {
          expect(reply.message.text).toBe(capped(`Hi ${senderName}: ${caption}`));
        }
      },
      { runs: runsFor(2_000), maxMsPerInput: 500, clock: 'cpu' },
    );
  });
});
