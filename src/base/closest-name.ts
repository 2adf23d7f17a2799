import { editDistance } from './edit-distance.js';

/**
 * What to tell someone who wrote a name that does not exist: `; did you mean "x"?` for the closest
 * known name when it is near enough to be a typo (the same test as the config's unknown keys), else
 * the known names (the first `max` of them).
 */
export function closestNameHint(name: string, known: readonly string[], max = 10): string {
  if (known.length === 0) return '';
  let best: string | undefined;
  let bestDistance = Math.min(2, Math.max(1, Math.floor(name.length / 3))) + 1;
  for (const candidate of known) {
    const d = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      bestDistance = d;
      best = candidate;
    }
  }
  if (best !== undefined) return `; did you mean "${best}"?`;
  const shown = known.slice(0, max).join(', ');
  return `; the names are ${shown}${known.length > max ? `, ... (${known.length} in all)` : ''}`;
}
