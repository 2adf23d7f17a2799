import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from '../../support/cli-in-process.js';

/**
 * validate warns about a tags: condition on a tag that no tag: action sets (issue 28): most often a
 * typo, which silences the rule (any, all) or makes it hold always (none) without a word. The
 * config is valid (exit 0); the warning names file:line:column and the closest tag set.
 */

const dir = mkdtempSync(join(tmpdir(), 'tag-warnings-'));
const EXAMPLE = readFileSync('config/bridge.example.yaml', 'utf8');

function config(name: string, rules: string): { path: string; text: string } {
  const text = EXAMPLE.replace('rules:\n', `rules:\n${rules}`);
  const path = join(dir, name);
  writeFileSync(path, text);
  return { path, text };
}

/** 1-based line:column of the first `needle` on or after the line holding `after`. */
function positionOf(text: string, after: string, needle: string): string {
  const lines = text.split('\n');
  const from = lines.findIndex((line) => line.includes(after));
  const line = lines.findIndex((l, i) => i >= from && l.includes(needle));
  return `${line + 1}:${(lines[line] ?? '').indexOf(needle) + 1}`;
}

const SETTER = `  - name: mark-vip
    on: message_in
    if: { channel_name: "VIP Line" }
    then: [ { tag: [ vip, gold ], for: 30d } ]
  - name: sla
    on: message_in
    then: [ { after: 1h, then: [ { tag: waited } ] } ]
`;

describe('validate warns about conditions on tags no rule sets', () => {
  it('a typo, inside any/not, with the closest tag set; none: says it always holds', async () => {
    const { path, text } = config(
      'typo.yaml',
      `${SETTER}  - name: fast
    on: message_in
    if:
      any:
        - { tags: { all: [ gold, vipp ] } }
        - not: { tags: { none: [ waited, platinum ] } }
    then: [ { need_human: true } ]
`,
    );
    const { code, stderr } = await cli(['validate', '--allow-missing-env', path]);
    expect(code).toBe(0);
    const lines = stderr.split('\n').filter((l) => l.includes('no rule sets the tag'));
    expect(lines).toEqual([
      `warning: ${path}:${positionOf(text, 'name: fast', 'vipp')}: rules.2.if.any.0.tags.all.1 (fast): no rule sets the tag "vipp" (tag: vipp), so tags: all never holds for it; did you mean "vip"?`,
      `warning: ${path}:${positionOf(text, 'name: fast', 'platinum')}: rules.2.if.any.1.not.tags.none.1 (fast): no rule sets the tag "platinum" (tag: platinum), so tags: none always holds for it; the tags set are gold, vip, waited`,
    ]);
  });

  it('says so when no rule tags at all', async () => {
    const { path } = config(
      'no-setter.yaml',
      `  - name: fast
    on: message_in
    if: { tags: { any: [ vip ] } }
    then: [ { need_human: true } ]
`,
    );
    const { code, stderr } = await cli(['validate', '--allow-missing-env', path]);
    expect(code).toBe(0);
    expect(stderr).toContain(
      'rules.0.if.tags.any.0 (fast): no rule sets the tag "vip" (tag: vip), so tags: any never holds for it: no rule has a tag: action',
    );
  });

  it('says nothing when every tag tested is set (by a rule, a timer or when_closed; case does not matter)', async () => {
    const { path } = config(
      'fine.yaml',
      `${SETTER}  - name: fast
    on: message_in
    if: { tags: { any: [ VIP, waited, window-missed ] } }
    then: [ { need_human: true } ]
`,
    );
    const withClosed = readFileSync(path, 'utf8').replace(
      '    - need_human: true\n',
      '    - need_human: true\n    - tag: window-missed\n',
    );
    writeFileSync(path, withClosed);
    const { code, stderr } = await cli(['validate', '--allow-missing-env', path]);
    expect(code).toBe(0);
    expect(stderr).not.toContain('no rule sets the tag');
  });
});
