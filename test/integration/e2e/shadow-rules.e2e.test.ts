import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import type { ShadowReport } from '../../../src/cli/format-shadow-report.js';
import { runCli } from '../../../src/cli/run-cli.js';
import { exampleConfig } from '../../support/bridge-harness.js';
import { createWorld, type World } from '../../support/e2e-world.js';

// Issue 28, "done when": with shadow: on, a candidate that differs on some events (a stricter
// keyword list) reports exactly those events in `shadow report` and the metric; the active rules'
// actions are what a bridge without shadow rules does; identical rules report none; a changed
// candidate file, and shadow: removed, take effect without a restart.

/** The example's escalation keywords, and the candidate's stricter list (no refund, no kecewa). */
const ACTIVE_KEYWORDS = 'any_keywords: [ refund, komplain, kecewa, marah, "tidak puas" ]';
const STRICTER_KEYWORDS = 'any_keywords: [ komplain, marah, "tidak puas" ]';

/** Each text, and whether the candidate's plan differs, by rule. */
const SCRIPT: { text: string; differs: string[] }[] = [
  { text: 'Saya mau refund', differs: ['escalate-complaints'] },
  { text: 'barang rusak', differs: [] },
  { text: 'saya kecewa sekali', differs: ['escalate-complaints'] },
  { text: 'minta katalog dong', differs: [] },
  { text: 'saya marah, mau komplain', differs: [] },
  { text: 'halo kak', differs: [] },
  // The active escalation stops before the catalog; without it the candidate sends the catalog.
  { text: 'refund, dan minta katalog', differs: ['escalate-complaints', 'catalog'] },
];
const CONVERSATIONS = 4;

async function cli(argv: string[]) {
  let out = '';
  let err = '';
  const code = await runCli(argv, { stdout: (t) => (out += t), stderr: (t) => (err += t) });
  return { code, out, err };
}

/** The example rules as a candidate file (its `rules:` section), with an edit. */
async function candidateText(edit: (rules: string) => string = (r) => r): Promise<string> {
  const config = await exampleConfig({ hours: 'open', retention: { done_events: '1h' } });
  return edit(config.slice(config.indexOf('rules:\n')));
}

/** Plays the script in every conversation; returns the event keys by what the candidate should find. */
function play(w: World, tag: string) {
  const keys = { all: [] as string[], differing: new Map<string, string[]>() };
  for (let c = 0; c < CONVERSATIONS; c++) {
    const id = `c-shadow-${tag}-${c}`;
    w.conversation(id, { type: 'telegram', id: 'ch_tg' }, `Pelanggan ${c}`);
    for (const line of SCRIPT) {
      const key = `channel.message_in|${w.say(id, line.text).messageId}`;
      keys.all.push(key);
      if (line.differs.length > 0) keys.differing.set(key, line.differs);
    }
  }
  return keys;
}

/** What the platform and the CRM saw of each conversation of a world. */
function outside(w: World, tag: string) {
  const seen: Record<string, unknown> = {};
  for (let c = 0; c < CONVERSATIONS; c++) {
    const id = `c-shadow-${tag}-${c}`;
    const detail = w.detail(id);
    seen[`c-${c}`] = {
      notes: w.notes(id),
      replies: w.apiMessages(id).map((m) => [m.type, m.text, m.caption]),
      needHuman: detail.needHuman,
      forwards: w.crm.requests.filter((r) => r.body.includes(`"conversationId":"${id}"`)).length,
    };
  }
  const calls: Record<string, number> = {};
  for (const request of w.admin.requests()) {
    const endpoint = request.endpoint ?? 'unknown';
    calls[endpoint] = (calls[endpoint] ?? 0) + 1;
  }
  return { conversations: seen, calls };
}

async function metric(w: World, name: string): Promise<string[]> {
  const text = await (await fetch(`http://127.0.0.1:${w.env.PORT}/metrics`)).text();
  return text.split('\n').filter((line) => line.startsWith(name));
}

describe('shadow rules, end to end', () => {
  let world: World;
  let dir: string;
  let candidateFile: string;
  let played: ReturnType<typeof play>;
  let withoutShadow: ReturnType<typeof outside>;
  const flags = () => ['--redis-url', world.env.REDIS_URL as string, '--prefix', world.prefix];
  const report = async (extra: string[] = []): Promise<ShadowReport> => {
    const run = await cli(['shadow', 'report', ...flags(), '--json', '--examples', '100', ...extra]);
    expect(run.code, run.err).toBe(0);
    return JSON.parse(run.out) as ShadowReport;
  };
  const reloads = () => world.bridges[0]?.logs.filter((l) => l.includes('config reloaded')).length ?? 0;

  beforeAll(async () => {
    const base = await exampleConfig({ hours: 'open', retention: { done_events: '1h' } });
    // The same traffic through a bridge without shadow rules: what the active rules do alone.
    const plain = await createWorld({ config: base });
    try {
      const keys = play(plain, 'x');
      await waitFor(
        async () => (await Promise.all(keys.all.map((k) => plain.eventRun(k)))).every((r) => r?.result),
        {
          timeoutMs: 30_000,
          what: 'every event run without shadow rules',
        },
      );
      await plain.settled({ quietMs: 1_000 });
      withoutShadow = outside(plain, 'x');
    } finally {
      await plain.close();
    }

    dir = await mkdtemp(join(tmpdir(), 'shadow-e2e-'));
    candidateFile = join(dir, 'candidate.yaml');
    await writeFile(candidateFile, await candidateText((r) => r.replace(ACTIVE_KEYWORDS, STRICTER_KEYWORDS)));
    world = await createWorld({ config: `${base}shadow:\n  rules: ${candidateFile}\n` });
    const w = world;
    played = play(w, 'x');
    await waitFor(
      async () => (await Promise.all(played.all.map((k) => w.eventRun(k)))).every((r) => r?.result),
      {
        timeoutMs: 30_000,
        what: 'every event run with shadow rules',
      },
    );
    await w.settled({ quietMs: 1_000 });
  }, 120_000);

  afterAll(async () => {
    await world?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('the active rules do exactly what they do without shadow rules', () => {
    expect(withoutShadow.calls.note).toBeGreaterThan(0);
    expect(outside(world, 'x')).toEqual(withoutShadow);
  });

  it('shadow report and the metric name exactly the events whose plans differ', async () => {
    // The counts of agreeing events are written within a few seconds.
    const r = await waitFor(
      async () => {
        const got = await report();
        return got.events >= played.all.length ? got : undefined;
      },
      { timeoutMs: 20_000, what: 'the shadow counts of every event' },
    );
    expect(r.events).toBe(played.all.length);
    expect(r.differed).toBe(played.differing.size);
    const byRule = (rule: string) => r.rules.find((x) => x.rule === rule);
    const expectedFor = (rule: string) =>
      [...played.differing].filter(([, rules]) => rules.includes(rule)).map(([key]) => key);
    for (const rule of ['escalate-complaints', 'catalog']) {
      expect(byRule(rule)?.differed, rule).toBe(expectedFor(rule).length);
      expect(
        byRule(rule)
          ?.examples.map((e) => e.eventKey)
          .sort(),
        rule,
      ).toEqual(expectedFor(rule).sort());
    }
    const escalate = byRule('escalate-complaints');
    // 4 of the 7 texts escalate in the active rules, 1 in the candidate's, per conversation.
    expect(escalate).toMatchObject({
      events: 4 * CONVERSATIONS,
      active: 4 * CONVERSATIONS,
      candidate: CONVERSATIONS,
    });
    const escalation = (keyword: string) => [
      `note "Escalated by escalate-complaints: customer wrote '${keyword}'"`,
      'need_human',
      'forward crm',
      'after 15m unless agent_reply: [note "No agent reply 15 minutes after escalation."; forward crm]',
    ];
    const notMatched = { matched: false, actions: [] };
    expect(escalate?.instead).toEqual([
      {
        count: 2 * CONVERSATIONS,
        active: { matched: true, actions: escalation('refund') },
        candidate: notMatched,
      },
      {
        count: CONVERSATIONS,
        active: { matched: true, actions: escalation('kecewa') },
        candidate: notMatched,
      },
    ]);
    expect(byRule('catalog')?.instead[0]?.candidate).toEqual({
      matched: true,
      actions: ['reply document https://cdn.example.com/katalog.pdf caption "Katalog terbaru"'],
    });
    for (const example of escalate?.examples ?? []) {
      expect(example.conversationId).toMatch(/^c-shadow-x-\d$/);
    }
    const differences = await metric(world, 'convo_bridge_shadow_differences_total{');
    expect(differences.sort()).toEqual(
      [
        `convo_bridge_shadow_differences_total{rule="catalog",business="default"} ${expectedFor('catalog').length}`,
        `convo_bridge_shadow_differences_total{rule="escalate-complaints",business="default"} ${expectedFor('escalate-complaints').length}`,
      ].sort(),
    );
    expect(await metric(world, 'convo_bridge_shadow_events_total')).toEqual([
      `convo_bridge_shadow_events_total{business="default"} ${played.all.length}`,
    ]);

    const text = await cli(['shadow', 'report', ...flags()]);
    expect(text.code, text.err).toBe(0);
    expect(text.out).toContain(
      `events evaluated: ${played.all.length}; events whose plans differed: ${played.differing.size}`,
    );
    expect(text.out).toMatch(/escalate-complaints\s+16\s+16\s+4\s+12\n/);
    expect(text.out).toContain('candidate: does not match');
  });

  it('hot reload: identical candidate rules report none; a changed file reports its change; shadow: removed stops it', async () => {
    const w = world;
    // The same rules as the active ones, written over the candidate file: no restart.
    let before = reloads();
    await writeFile(candidateFile, await candidateText());
    await waitFor(() => reloads() > before, { timeoutMs: 10_000, what: 'the candidate reload' });
    expect((await cli(['shadow', 'reset', ...flags()])).code).toBe(0);
    const same = play(w, 'y');
    const r1 = await waitFor(
      async () => {
        const got = await report();
        return got.events >= same.all.length ? got : undefined;
      },
      { timeoutMs: 30_000, what: 'the identical candidate evaluated on every event' },
    );
    expect(r1).toMatchObject({ events: same.all.length, differed: 0 });
    expect(r1.rules.every((rule) => rule.differed === 0 && rule.active === rule.candidate)).toBe(true);
    expect((await cli(['shadow', 'report', ...flags()])).out).toContain('no differences');

    // A changed reply text: only the catalog rule differs, on the catalog messages (one per
    // conversation: the other one that names the catalog escalates, which stops the rules).
    before = reloads();
    await writeFile(candidateFile, await candidateText((r) => r.replace('Katalog terbaru', 'Katalog 2027')));
    await waitFor(() => reloads() > before, { timeoutMs: 10_000, what: 'the changed candidate reload' });
    const changed = play(w, 'z');
    const r2 = await waitFor(
      async () => {
        const got = await report();
        return got.events >= same.all.length + changed.all.length ? got : undefined;
      },
      { timeoutMs: 30_000, what: 'the changed candidate evaluated on every event' },
    );
    expect(r2.rules.filter((rule) => rule.differed > 0).map((rule) => [rule.rule, rule.differed])).toEqual([
      ['catalog', CONVERSATIONS],
    ]);
    expect(r2.rules.find((rule) => rule.rule === 'catalog')?.instead[0]?.candidate.actions).toEqual([
      'reply document https://cdn.example.com/katalog.pdf caption "Katalog 2027"',
    ]);

    // shadow: removed from the config: the candidate is no longer evaluated.
    before = reloads();
    const config = await readFile(w.configPath, 'utf8');
    await writeFile(w.configPath, config.replace(/shadow:\n {2}rules: .*\n/, ''));
    await waitFor(() => reloads() > before, { timeoutMs: 10_000, what: 'the reload without shadow:' });
    const off = play(w, 'o');
    await waitFor(
      async () => (await Promise.all(off.all.map((k) => w.eventRun(k)))).every((x) => x?.result),
      {
        timeoutMs: 30_000,
        what: 'every event run after shadow: was removed',
      },
    );
    // The metric counts an evaluation as it happens: once every event has run, it is final.
    const total = played.all.length + same.all.length + changed.all.length;
    expect(await metric(w, 'convo_bridge_shadow_events_total')).toEqual([
      `convo_bridge_shadow_events_total{business="default"} ${total}`,
    ]);
    expect(w.bridges[0]?.logs.some((l) => l.includes('"shadow":"off"'))).toBe(true);
  });
});
