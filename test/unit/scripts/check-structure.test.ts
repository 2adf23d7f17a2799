import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkStructure, MAX_FUNCTION_LINES } from '../../../scripts/check-structure.js';

/**
 * `npm run check:structure` keeps src/ tidy. Each case builds a small src/ tree in a
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

  it('finds sub-folders of one folder that depend on each other although no file circle ties them', () => {
    const root = tree({
      'rules/rule.ts':
        "import { base } from '../base/base.js';\nimport { x } from './a/x.js';\nimport { z } from './b/z.js';\nexport function rule(): string {\n  return base + x + z;\n}\n",
      'rules/a/x.ts': "import { y } from '../b/y.js';\nexport const x = y;\n",
      'rules/a/w.ts': "export const w = 'w';\n",
      'rules/b/y.ts': "export const y = 'y';\n",
      'rules/b/z.ts': "import { w } from '../a/w.js';\nexport const z = w;\n",
    });
    const report = checkStructure(root);
    expect(report.findings.map((f) => f.kind)).toEqual(['folder-circle']);
    expect(report.findings[0]?.message).toContain('rules/a/ <-> rules/b/');
    expect(report.findings[0]?.message).toContain('rules/b/z.ts -> ');
  });

  it('finds a file and a sub-folder of one folder that depend on each other', () => {
    const root = tree({
      'rules/rule.ts':
        "import { base } from '../base/base.js';\nimport { x } from './a/x.js';\nexport function rule(): string {\n  return base + x;\n}\nexport const name = 'rule';\n",
      'rules/a/x.ts': "export const x = 'x';\n",
      'rules/a/uses-rule.ts': "import { name } from '../rule.js';\nexport const again = name;\n",
      'index.ts':
        "export { rule } from './rules/rule.js';\nexport { again } from './rules/a/uses-rule.js';\n",
    });
    expect(kinds(root)).toEqual(['folder-circle']);
  });

  it.each([
    ['emulator/inbox.ts', 'platform/client.ts'],
    ['platform/client.ts', 'emulator/inbox.ts'],
  ])(
    'finds an import between folders of one layer that the layer map does not allow (%s -> %s)',
    (from, to) => {
      const root = tree({
        'index.ts':
          "export { rule } from './rules/rule.js';\nexport { inbox } from './emulator/inbox.js';\nexport { client } from './platform/client.js';\n",
        'emulator/inbox.ts': "export const inbox = 'inbox';\n",
        'platform/client.ts': "export const client = 'client';\n",
        [from]: `import { ${to.includes('platform') ? 'client' : 'inbox'} as other } from '../${to.replace('.ts', '.js')}';\nexport const ${from.includes('emulator') ? 'inbox' : 'client'} = other;\n`,
      });
      const report = checkStructure(root);
      expect(report.findings.map((f) => f.kind)).toEqual(['same-layer']);
      expect(report.findings[0]?.message).toContain(
        `${from.split('/')[0]}/ and ${to.split('/')[0]}/ share layer`,
      );
    },
  );

  it('lets a folder import a sibling of its layer that the layer map allows (platform/ -> observe/)', () => {
    const root = tree({
      'index.ts': "export { rule } from './rules/rule.js';\nexport { client } from './platform/client.js';\n",
      'platform/client.ts': "import { log } from '../observe/log.js';\nexport const client = log;\n",
      'observe/log.ts': "export const log = 'log';\n",
    });
    expect(kinds(root)).toEqual([]);
  });

  it('finds a folder that has no layer', () => {
    const root = tree({
      'index.ts': "export { x } from './misc/x.js';\n",
      'misc/x.ts': 'export const x = 1;\n',
    });
    expect(kinds(root)).toEqual(['unknown-folder']);
  });
});
