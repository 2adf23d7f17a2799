/** A line diff of two lists (longest common subsequence), so one missing item shows as one line. */
export function listDiff(expected: readonly string[], actual: readonly string[]): string[] {
  const n = expected.length;
  const m = actual.length;
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      const row = lcs[i] as number[];
      row[j] =
        expected[i] === actual[j]
          ? (lcs[i + 1]?.[j + 1] ?? 0) + 1
          : Math.max(lcs[i + 1]?.[j] ?? 0, row[j + 1] ?? 0);
    }
  }
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && expected[i] === actual[j]) {
      out.push(`  ${expected[i]}`);
      i++;
      j++;
    } else if (i < n && (j >= m || (lcs[i + 1]?.[j] ?? 0) >= (lcs[i]?.[j + 1] ?? 0))) {
      // Removals first, then additions: a replaced line reads "- old" then "+ new".
      out.push(`- ${expected[i]}`);
      i++;
    } else {
      out.push(`+ ${actual[j]}`);
      j++;
    }
  }
  if (n === 0 && m === 0) out.push('  (none)');
  return out;
}
