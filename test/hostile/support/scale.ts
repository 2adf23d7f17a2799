/**
 * How many generated inputs each hostile property runs. `HOSTILE_SCALE` multiplies the full counts
 * (unset or 1: the full run of 100,000+ inputs, `npm run test:hostile`); `npm test` sets a small
 * scale so that every property is still exercised on each run, in seconds.
 */
const MIN_RUNS = 25;

function readScale(): number {
  const raw = process.env.HOSTILE_SCALE;
  if (raw === undefined || raw.trim() === '') return 1;
  const scale = Number(raw);
  if (!Number.isFinite(scale) || scale <= 0 || scale > 10) {
    throw new Error(
      `HOSTILE_SCALE=${JSON.stringify(raw)} is not a number in (0, 10]; use 1 for the full run`,
    );
  }
  return scale;
}

export const HOSTILE_SCALE = readScale();

/** The runs for a property whose full-scale count is `full` (never fewer than a small floor). */
export function runsFor(full: number): number {
  return Math.max(Math.min(MIN_RUNS, full), Math.round(full * HOSTILE_SCALE));
}

/**
 * `HOSTILE_SEED` replays a run: fast-check prints the seed (and the path of the shrunk
 * counterexample) of any failure. Unset, every run explores new inputs.
 */
export function seedOption(): { seed?: number } {
  const raw = process.env.HOSTILE_SEED;
  if (raw === undefined || raw.trim() === '') return {};
  const seed = Number(raw);
  if (!Number.isInteger(seed)) throw new Error(`HOSTILE_SEED=${JSON.stringify(raw)} is not an integer`);
  return { seed };
}
