import { ConvoBridgeError } from '../base/errors.js';

/** One problem in a config file, at the place a user has to edit. Line and column are 1-based. */
export interface ConfigIssue {
  file: string;
  line: number;
  column: number;
  /** Dotted path of the offending key (`rules.0.then.1.reply`), '' for the whole file. */
  path: string;
  message: string;
}

/** `file:line:column: message`, the form editors and CI logs turn into links. */
export function formatConfigIssue(issue: ConfigIssue): string {
  return `${issue.file}:${issue.line}:${issue.column}: ${issue.message}`;
}

/**
 * The config could not be loaded. `issues` holds every problem found (not only the first), in
 * file order (with businesses_dir, file by file, in the order the files first appear); the
 * message lists them all, one per line.
 */
export class ConfigError extends ConvoBridgeError {
  readonly issues: readonly ConfigIssue[];

  constructor(issues: readonly ConfigIssue[], options: { cause?: unknown } = {}) {
    const files = new Map<string, number>();
    for (const issue of issues) if (!files.has(issue.file)) files.set(issue.file, files.size);
    const fileOrder = (issue: ConfigIssue) => files.get(issue.file) ?? 0;
    const sorted = [...issues].sort(
      (a, b) => fileOrder(a) - fileOrder(b) || a.line - b.line || a.column - b.column,
    );
    const count = sorted.length === 1 ? '1 problem' : `${sorted.length} problems`;
    const file = sorted[0]?.file ?? 'config';
    super(
      `config ${file} is invalid (${count}); fix these and load it again:\n${sorted.map(formatConfigIssue).join('\n')}`,
      { code: 'CONFIG_INVALID', cause: options.cause },
    );
    this.issues = sorted;
  }
}
