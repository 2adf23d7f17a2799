import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkStructure, MAX_FUNCTION_LINES } from '../../../scripts/check-structure.js';

/**
 * `npm run check:structure` keeps src/ tidy (issue 25). Each case builds a small src/ tree in a
 * temporary folder with exactly one fault and checks that the checker names it; the first case is
 * the tree without faults, so that each fault is the only reason for its finding.
 */
describe('check-structure', () => {
  let dir = '';
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = '';
  });

  function tree(files: Record<string, string>): string {
    dir = mkdtempSync(join(tmpdir(), 'check-structure-'));
    const base = {
      'cli.ts': "import { run } from './cli/run.js';\nrun();\n",
      'index.ts': "export { rule } from './rules/rule.js';\n",
      'healthcheck.ts': 'export {};\n',
      'cli/run.ts':
        "import { rule } from '../rules/rule.js';\nexport function run(): string {\n  return rule();\n}\n",
      'rules/rule.ts':
        "import { base } from '../base/base.js';\nexport function rule(): string {\n  return base;\n}\n",
      'base/base.ts': "export const base = 'base';\n",
    };
    for (const [file, text] of Object.entries({ ...base, ...files })) {
      const full = join(dir, 'src', file);
      mkdirSync(dirname(full), { recursive: true });
      writeFileSync(full, text);
    }
    return join(dir, 'src');
  }

  const kinds = (root: string) => checkStructure(root).findings.map((finding) => finding.kind);

  it('finds nothing in a tidy tree', () => {
    expect(checkStructure(tree({})).findings).toEqual([]);
  });

  it('finds an import circle', () => {
    const root = tree({
      'rules/rule.ts':
        "import { base } from '../base/base.js';\nimport { other } from './other.js';\nexport const rule = () => other + base;\n",
      'rules/other.ts':
        "import { rule } from './rule.js';\nexport const other = 'x';\nexport const again = rule;\n",
    });
    const report = checkStructure(root);
    expect(report.findings.map((f) => f.kind)).toEqual(['circle']);
    expect(report.findings[0]?.message).toContain('rules/other.ts');
  });

  it('finds a file that no entry point reaches', () => {
    const report = checkStructure(tree({ 'rules/only-for-tests.ts': 'export const x = 1;\n' }));
    expect(report.findings.map((f) => f.kind)).toEqual(['unreachable']);
    expect(report.findings[0]?.message).toContain('rules/only-for-tests.ts');
  });

  it('counts a literal dynamic import as reaching a file', () => {
    const root = tree({
      'cli/run.ts':
        "export async function run(): Promise<string> {\n  return (await import('../rules/rule.js')).rule();\n}\n",
    });
    expect(kinds(root)).toEqual([]);
  });

  it(`finds a function over ${MAX_FUNCTION_LINES} lines`, () => {
    const body = Array.from({ length: MAX_FUNCTION_LINES }, (_, i) => `  const v${i} = ${i};`).join('\n');
    const report = checkStructure(
      tree({ 'base/base.ts': `export const base = 'base';\nexport function long(): void {\n${body}\n}\n` }),
    );
    expect(report.findings.map((f) => f.kind)).toEqual(['long-function']);
    expect(report.findings[0]?.message).toContain('long is 122 lines');
  });

  it('finds an import against the layers and a circle between folders', () => {
    const root = tree({
      'base/base.ts':
        "import { rule } from '../rules/rule.js';\nexport const base = 'base';\nexport const r = rule;\n",
    });
    expect(kinds(root).sort()).toEqual(['circle', 'folder-circle', 'layer']);
  });

  it('finds a folder that has no layer', () => {
    const root = tree({
      'index.ts': "export { x } from './misc/x.js';\n",
      'misc/x.ts': 'export const x = 1;\n',
    });
    expect(kinds(root)).toEqual(['unknown-folder']);
  });
});
