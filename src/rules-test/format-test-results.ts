import type { FileResult } from './run-rule-tests.js';

/** Results as a test runner prints them: a mark per case, a diff and file:line under each failure. */
export function formatTestResults(results: readonly FileResult[]): { text: string; failed: number } {
  const lines: string[] = [];
  let passed = 0;
  let failed = 0;
  for (const result of results) {
    const business = result.business !== undefined ? `, business ${result.business}` : '';
    lines.push(`${result.file}${result.config !== '' ? `  (rules of ${result.config}${business})` : ''}`);
    if (result.error !== undefined) {
      failed += 1;
      lines.push('  ✗ the file cannot be run:');
      for (const line of result.error.split('\n')) lines.push(`      ${line}`);
      lines.push('');
      continue;
    }
    for (const c of result.cases) {
      if (c.error === undefined && c.failures.length === 0) {
        passed += 1;
        lines.push(`  ✓ ${c.name}`);
        continue;
      }
      failed += 1;
      lines.push(`  ✗ ${c.name}`);
      lines.push(`      at ${c.where}`);
      if (c.error !== undefined) for (const line of c.error.split('\n')) lines.push(`      ${line}`);
      for (const failure of c.failures) {
        lines.push(`      ${failure.check}:${failure.list ? '' : ' - expected, + actual'}`);
        for (const line of failure.diff) lines.push(`        ${line}`);
      }
    }
    lines.push('');
  }
  lines.push(`${passed} passed, ${failed} failed`);
  return { text: `${lines.join('\n')}\n`, failed };
}
