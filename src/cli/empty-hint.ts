import { describeWhere, type RedisTarget } from './redis-target.js';

/** Where an empty listing looked, and which other prefixes hold entries (the usual mistake). */
export function emptyHint(what: string, target: RedisTarget, others: readonly string[]): string {
  const where = `no ${what} under prefix "${target.prefix}" at ${describeWhere(target)} (from ${target.source})`;
  if (others.length === 0) return `${where}\n`;
  return `${where}\nthis Redis has ${what} under prefix ${others.map((p) => `"${p}"`).join(', ')}: pass --prefix ${others[0]}, or --config with the bridge's config\n`;
}
