import { parseDuration } from '../base/duration.js';
import { CliError } from './cli-error.js';

/** `--since 24h`: the instant that long before now (ms). */
export function parseSince(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const ms = parseDuration(value);
  if (ms === undefined)
    throw new CliError(`--since ${JSON.stringify(value)} is not a duration: write e.g. 30m, 24h or 7d`);
  return now - ms;
}
