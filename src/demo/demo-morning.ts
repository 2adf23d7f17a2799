/**
 * Picks the simulated morning the demo plays (pure). It must be:
 * - a working day (Mon-Fri, not a configured holiday), so that 07:40 is before opening time and
 *   08:00 opens, as the script expects (config/demo.yaml: mon-fri 08:00-17:00);
 * - in the future, together with the day before (the script's prologue is "yesterday 07:35"):
 *   the worker dates its action ledger with the real clock and, after an unknown outcome, looks for
 *   platform messages sent since then (src/worker/exactly-once/reconcile-action.ts); platform times from a
 *   simulated clock behind the real one would hide the message it already sent and make it send
 *   again. A morning ahead of the real time keeps that check sound.
 */
const WIB_OFFSET_MS = 7 * 3_600_000;
const DAY_MS = 24 * 3_600_000;
/** Days looked at before giving up (a config with every weekday a holiday). */
const MAX_DAYS = 60;

export interface DemoMorning {
  /** WIB date of the morning, `YYYY-MM-DD`. */
  date: string;
  /** Epoch ms of `HH:MM` WIB on that date (`dayOffset` -1 for the day before). */
  at(time: string, dayOffset?: number): number;
}

function wibMidnight(ms: number): number {
  const wib = ms + WIB_OFFSET_MS;
  return wib - (wib % DAY_MS) - WIB_OFFSET_MS;
}

function isoDate(midnightMs: number): string {
  return new Date(midnightMs + WIB_OFFSET_MS).toISOString().slice(0, 10);
}

function weekday(midnightMs: number): number {
  return new Date(midnightMs + WIB_OFFSET_MS).getUTCDay();
}

export function parseClockTime(time: string): number {
  const match = /^(\d{2}):(\d{2})$/.exec(time);
  if (!match) throw new Error(`not a HH:MM time: ${JSON.stringify(time)}`);
  return (Number(match[1]) * 60 + Number(match[2])) * 60_000;
}

/**
 * The first working day whose previous day's `prologueTime` (WIB) is still ahead of `realNowMs`.
 */
export function pickDemoMorning(
  realNowMs: number,
  options: { holidays?: readonly string[]; prologueTime?: string } = {},
): DemoMorning {
  const holidays = new Set(options.holidays ?? []);
  const prologue = parseClockTime(options.prologueTime ?? '07:35');
  let day = wibMidnight(realNowMs) + DAY_MS;
  for (let i = 0; i < MAX_DAYS; i += 1, day += DAY_MS) {
    const dow = weekday(day);
    if (dow === 0 || dow === 6 || holidays.has(isoDate(day))) continue;
    if (day - DAY_MS + prologue <= realNowMs) continue;
    const midnight = day;
    return {
      date: isoDate(midnight),
      at: (time, dayOffset = 0) => midnight + dayOffset * DAY_MS + parseClockTime(time),
    };
  }
  throw new Error(`no working day in the next ${MAX_DAYS} days (check business_hours.holidays)`);
}
