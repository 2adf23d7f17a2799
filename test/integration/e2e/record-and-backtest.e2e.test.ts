import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { runCli } from '../../../src/cli/run-cli.js';
import { parseConfigText } from '../../../src/config/load-config.js';
import type { BacktestReport } from '../../../src/record/backtest.js';
import {
  factsFromJson,
  type RecordedEvent,
  RecordedEventSchema,
} from '../../../src/record/recorded-event.js';
import { evaluateRules } from '../../../src/rules/evaluate-rules.js';
import { exampleConfig } from '../../support/bridge-harness.js';
import { createWorld, type World } from '../../support/e2e-world.js';

// Issue 15, "done when": 200 events of the demo's kinds recorded by a running bridge; a backtest
// with a changed keyword list reports exactly the additions and removals that explain finds event
// by event; --expect catches a changed plan.
const CONVERSATIONS = 50;
const TEXTS = [
  'Saya mau refund',
  'barang rusak',
  'saya kecewa sekali',
  'minta katalog dong',
  'halo kak',
  'refund, barang rusak',
];

async function cli(argv: string[]) {
  let out = '';
  let err = '';
  const code = await runCli(argv, { stdout: (t) => (out += t), stderr: (t) => (err += t) });
  return { code, out, err };
}

describe('recorded events and backtest, end to end', () => {
  let world: World;
  let dir: string;
  let oldConfig: string;
  let newConfig: string;
  let exported: RecordedEvent[];

  beforeAll(async () => {
    // Opening hours all day: after-hours stays quiet, so every plan depends on the texts alone.
    const text = `${await exampleConfig({ hours: 'open' })}record:\n  enabled: true\n  max_count: 1000\n`;
    world = await createWorld({ config: text });
    dir = await mkdtemp(join(tmpdir(), 'backtest-e2e-'));
    oldConfig = join(dir, 'old.yaml');
    newConfig = join(dir, 'new.yaml');
    await writeFile(oldConfig, text);
    // The change under test: "refund" no longer escalates, "rusak" does.
    await writeFile(
      newConfig,
      text.replace('any_keywords: [ refund, komplain,', 'any_keywords: [ rusak, komplain,'),
    );
    const w = world;
    for (let i = 0; i < CONVERSATIONS; i++) {
      const c = `c-bt-${i}`;
      w.conversation(c, { type: i % 2 === 0 ? 'telegram' : 'webchat', id: i % 2 === 0 ? 'ch_tg' : 'ch_web' });
      w.say(c, TEXTS[i % TEXTS.length] as string);
      w.admin.aiReply(c, i % 5 === 0 ? 'Maaf, saya tidak tahu.' : 'Baik kak, kami cek.');
      w.admin.agentReply(c, 'Halo kak, dibantu ya');
      w.say(c, TEXTS[(i + 3) % TEXTS.length] as string);
    }
    await waitFor(async () => (await w.redis.zcard(w.keys.recordedIndex)) === CONVERSATIONS * 4, {
      timeoutMs: 60_000,
      what: `${CONVERSATIONS * 4} recorded events`,
    });
  }, 90_000);

  afterAll(async () => {
    await world?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('records 200 events with their plans, readable by events list and export', async () => {
    const flags = ['--redis-url', world.env.REDIS_URL as string, '--prefix', world.prefix];
    const list = await cli(['events', 'list', ...flags, '--limit', '5']);
    expect(list.code).toBe(0);
    expect(list.out).toContain(`200 recorded event(s) under prefix "${world.prefix}"`);
    const file = join(dir, 'events.jsonl');
    const exportRun = await cli(['events', 'export', ...flags, '--out', file]);
    expect(exportRun.code).toBe(0);
    exported = (await readFile(file, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => RecordedEventSchema.parse(JSON.parse(line)));
    expect(exported).toHaveLength(200);
    expect(new Set(exported.map((e) => e.event.kind))).toEqual(
      new Set(['message_in', 'ai_reply', 'agent_reply']),
    );
    // The recording is faithful: explain with the old rules gives each recorded plan again.
    const old = parseConfigText(await readFile(oldConfig, 'utf8'), {
      fileName: oldConfig,
      env: {},
      allowMissingEnv: true,
    });
    for (const line of exported) {
      const plan = evaluateRules(old.rules, line.event, factsFromJson(line.facts), new Date(line.now));
      expect(plan.actions.map((a) => a.id)).toEqual(line.plan?.actions.map((a) => a.id));
    }
    const shown = await cli(['events', 'show', String(exported[0]?.seq), ...flags]);
    expect(JSON.parse(shown.out)).toMatchObject({ event: { key: exported[0]?.event.key } });
  });

  it('backtest --since reads the recording from Redis; under the same rules nothing changes', async () => {
    const flags = ['--redis-url', world.env.REDIS_URL as string, '--prefix', world.prefix];
    const run = await cli(['backtest', '--config', oldConfig, '--since', '1h', ...flags, '--json']);
    expect(run.err).toBe('');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.out) as BacktestReport;
    // The simulation of facts, timers and windows agrees with what the worker did, event by event.
    expect(report.events).toBe(200);
    expect(report.conversations).toBe(CONVERSATIONS);
    expect(report.changedEvents).toBe(0);
    expect(report.escalations).toEqual([]);
    expect(report.rules.find((r) => r.rule === 'escalate-complaints')?.before).toBeGreaterThan(0);
  });

  it('backtest with a changed keyword list reports exactly what explain finds event by event', async () => {
    const file = join(dir, 'events.jsonl');
    const run = await cli(['backtest', '--config', newConfig, '--from', file, '--json']);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.out) as BacktestReport;

    // Explain, event by event, with each event's recorded facts and instant.
    const rules = parseConfigText(await readFile(newConfig, 'utf8'), {
      fileName: newConfig,
      env: {},
      allowMissingEnv: true,
    }).rules;
    const added = new Map<string, number>();
    const removed = new Map<string, number>();
    let changed = 0;
    const bump = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);
    for (const line of exported) {
      const plan = evaluateRules(rules, line.event, factsFromJson(line.facts), new Date(line.now));
      const now = plan.actions.map((a) => `${a.rule} ${a.type}`);
      const was = (line.plan?.actions ?? []).map((a) => `${a.rule} ${a.type}`);
      if (now.join() !== was.join()) changed += 1;
      for (const k of now.filter((x) => !was.includes(x))) bump(added, k);
      for (const k of was.filter((x) => !now.includes(x))) bump(removed, k);
    }
    const asMap = (list: BacktestReport['added']) =>
      new Map(list.map((c) => [`${c.rule} ${c.type}`, c.count]));
    expect(asMap(report.added)).toEqual(added);
    expect(asMap(report.removed)).toEqual(removed);
    expect(report.changedEvents).toBe(changed);
    // And the expected numbers, worked out from the texts: "Saya mau refund" (first or second
    // message) loses its escalation; "barang rusak" gains one; "refund, barang rusak" keeps it.
    const refundOnly = exported.filter((e) => e.event.text === 'Saya mau refund').length;
    const rusakOnly = exported.filter((e) => e.event.text === 'barang rusak').length;
    expect(refundOnly).toBeGreaterThan(0);
    expect(rusakOnly).toBeGreaterThan(0);
    for (const type of ['note', 'need_human', 'forward', 'timer']) {
      expect(added.get(`escalate-complaints ${type}`)).toBe(rusakOnly);
      expect(removed.get(`escalate-complaints ${type}`)).toBe(refundOnly);
    }
    expect(report.rules.find((r) => r.rule === 'escalate-complaints')).toMatchObject({
      after: expect.any(Number),
    });
    const escalate = report.rules.find((r) => r.rule === 'escalate-complaints');
    expect((escalate?.after ?? 0) - (escalate?.before ?? 0)).toBe(rusakOnly - refundOnly);
    expect(report.escalations.some((e) => e.change === 'new')).toBe(true);
    expect(report.escalations.some((e) => e.change === 'no longer')).toBe(true);

    const table = await cli(['backtest', '--config', newConfig, '--from', file, '--fail-on-change']);
    expect(table.code).toBe(1);
    expect(table.out).toContain('ACTIONS ADDED');
    expect(table.err).toContain('--fail-on-change');
  });

  it('--expect passes against plans saved with the same rules and catches a changed plan', async () => {
    const file = join(dir, 'events.jsonl');
    const golden = join(dir, 'plan.jsonl');
    const saved = await cli(['backtest', '--config', oldConfig, '--from', file, '--save', golden]);
    expect(saved.code).toBe(0);
    const same = await cli(['backtest', '--config', oldConfig, '--from', file, '--expect', golden]);
    expect(same.out).toContain('all 200 plan(s) as expected');
    expect(same.code).toBe(0);
    const changed = await cli(['backtest', '--config', newConfig, '--from', file, '--expect', golden]);
    expect(changed.code).toBe(1);
    expect(changed.out).toMatch(/event\(s\) differ \(- expected, \+ actual\)/);
    expect(changed.out).toContain('- matched escalate-complaints');
    expect(changed.out).toContain('+ matched escalate-complaints');
  });
});
