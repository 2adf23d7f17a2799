/**
 * Durations and sizes as the config writes them: `500ms`, `15s`, `15m`, `12h`, `7d`; `512kb`, `1mb`.
 * One unit per value keeps them unambiguous in YAML and in error messages.
 */
const DURATION_PATTERN = /^(\d+)(ms|s|m|h|d)$/;
const DURATION_UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

const SIZE_PATTERN = /^(\d+)(b|kb|mb|gb)$/;
const SIZE_UNIT_BYTES = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 } as const;

/** The text shown in errors and in the JSON Schema for a duration. */
export const DURATION_HINT = 'a duration such as 500ms, 15s, 15m, 12h or 7d';
export const DURATION_REGEX_SOURCE = DURATION_PATTERN.source;
export const SIZE_HINT = 'a size such as 512kb or 1mb';
export const SIZE_REGEX_SOURCE = SIZE_PATTERN.source;

/** Milliseconds of a duration such as `15m`; undefined when the text is not one. */
export function parseDuration(text: string): number | undefined {
  const m = DURATION_PATTERN.exec(text.trim());
  if (!m) return undefined;
  const [, amount, unit] = m;
  const ms = Number(amount) * DURATION_UNIT_MS[unit as keyof typeof DURATION_UNIT_MS];
  return Number.isSafeInteger(ms) ? ms : undefined;
}

/** Bytes of a size such as `1mb`; undefined when the text is not one. */
export function parseSize(text: string): number | undefined {
  const m = SIZE_PATTERN.exec(text.trim().toLowerCase());
  if (!m) return undefined;
  const [, amount, unit] = m;
  const bytes = Number(amount) * SIZE_UNIT_BYTES[unit as keyof typeof SIZE_UNIT_BYTES];
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

/**
 * A short human duration for messages and `{{window.closed_for}}`: the two largest units, hours
 * not rolled into days because the reply window is counted in hours ("25h 3m", "3m 20s", "45s").
 */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '0s';
  const totalSeconds = Math.floor(ms / 1000);
  if (totalSeconds === 0 && ms > 0) return `${Math.floor(ms)}ms`;
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const seconds = totalSeconds % 60;
  if (hours > 0) return minutes > 0 ? `${hours}h ${minutes}m` : `${hours}h`;
  if (minutes > 0) return seconds > 0 ? `${minutes}m ${seconds}s` : `${minutes}m`;
  return `${seconds}s`;
}
