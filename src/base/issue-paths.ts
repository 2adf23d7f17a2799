/** The part of a zod issue this helper reads (zod's `$ZodIssue` has more). */
interface IssueLike {
  readonly code: string;
  readonly path: readonly PropertyKey[];
}

/**
 * Zod issues summarised by where and what kind, never by value: `events.0.event.text:
 * invalid_type; ...`. For errors about data that holds what customers wrote (job data, events),
 * whose messages reach logs, traces and dead letters.
 */
export function describeIssuePaths(issues: readonly IssueLike[], max = 3): string {
  const shown = issues
    .slice(0, max)
    .map((issue) => `${issue.path.map(String).join('.') || '(the whole value)'}: ${issue.code}`);
  return `${shown.join('; ')}${issues.length > max ? `; and ${issues.length - max} more` : ''}`;
}
