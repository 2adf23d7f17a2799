import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from '../../support/cli-in-process.js';

/**
 * validate warns about empty sets that silence rules without a word (issue 30): a window_closing
 * rule when reply_window.applies_to is [], a clock: business timer when business_hours.weekly is
 * {}. The config is valid (exit 0); the warnings name file:line:column.
 */

const dir = mkdtempSync(join(tmpdir(), 'config-warnings-'));
const EXAMPLE = readFileSync('config/bridge.example.yaml', 'utf8');
const RULES = `rules:
  - name: closing
    on: window_closing
    before: 2h
    then: [ { note: "closing soon" } ]
  - name: sla
    on: message_in
    then:
      - after: 30m
        clock: business
        then: [ { need_human: true } ]
`;

function config(name: string, edits: [string, string][]): { path: string; text: string } {
  let text = EXAMPLE.replace('rules:\n', RULES);
  for (const [from, to] of edits) {
    expect(text).toContain(from);
    text = text.replace(from, to);
  }
  const path = join(dir, name);
  writeFileSync(path, text);
  return { path, text };
}

/** 1-based line and column of the first `needle` after the line holding `after`. */
function positionOf(text: string, after: string, needle: string): string {
  const lines = text.split('\n');
  const from = lines.findIndex((line) => line.includes(after));
  const line = lines.findIndex((l, i) => i >= from && l.includes(needle));
  return `${line + 1}:${(lines[line] ?? '').indexOf(needle) + 1}`;
}

const WEEKLY = 'weekly: { mon-fri: "08:00-17:00", sat: "09:00-13:00" }';
const APPLIES_TO = 'applies_to: [ whatsapp_api, instagram, messenger ]';

describe('validate warns about empty sets', () => {
  it('reply_window.applies_to: [] beside a window_closing rule', async () => {
    const { path, text } = config('no-window.yaml', [[APPLIES_TO, 'applies_to: []']]);
    const { code, stdout, stderr } = await cli(['validate', '--allow-missing-env', path]);
    expect(code).toBe(0);
    expect(stderr).toContain(
      `warning: ${path}:${positionOf(text, 'name: closing', 'window_closing')}: rules.0 (closing): on: window_closing never fires: reply_window.applies_to is [], so no channel has a reply window`,
    );
    expect(stderr).not.toContain('clock: business never comes due');
    expect(stdout).toContain('  reply window: 24h for no channel (applies_to: []);');
  });

  it('business_hours.weekly: {} beside a clock: business timer', async () => {
    const { path, text } = config('never-open.yaml', [[WEEKLY, 'weekly: {}']]);
    const { code, stdout, stderr } = await cli(['validate', '--allow-missing-env', path]);
    expect(code).toBe(0);
    expect(stderr).toContain(
      `warning: ${path}:${positionOf(text, 'name: sla', 'business')}: rules.1.then.0.clock: clock: business never comes due: business_hours.weekly is {} (never open)`,
    );
    expect(stderr).not.toContain('never fires');
    expect(stdout).toContain('  business hours (Asia/Jakarta): never open (weekly: {}); 1 holiday');
  });

  it('says nothing when the sets are not empty', async () => {
    const { path } = config('fine.yaml', []);
    const { code, stderr } = await cli(['validate', '--allow-missing-env', path]);
    expect(code).toBe(0);
    expect(stderr).not.toMatch(/never fires|never comes due/);
  });

  it('with businesses: at the business whose rules are silenced, once', async () => {
    const fixture = 'test/fixtures/config/businesses';
    const text = readFileSync(`${fixture}/bridge.yaml`, 'utf8')
      .replace('  - id: toko-b\n', '  - id: toko-b\n    reply_window: { applies_to: [] }\n')
      .replace(
        '      - name: catalog\n',
        '      - name: closing\n        on: window_closing\n        before: 2h\n        then: [ { note: "closing" } ]\n      - name: catalog\n',
      )
      .replace('businesses_dir: dir', `businesses_dir: ${join(process.cwd(), fixture, 'dir')}`);
    const path = join(dir, 'agency.yaml');
    writeFileSync(path, text);
    const { code, stderr } = await cli(['validate', path]);
    const at = positionOf(text, 'name: closing', 'window_closing');
    expect(stderr).toBe(
      `warning: ${path}:${at}: business "toko-b": rules.0 (closing): on: window_closing never fires: reply_window.applies_to is [], so no channel has a reply window; list the channel kinds it applies to, or remove the rule\n`,
    );
    expect(code).toBe(0);
  });
});
