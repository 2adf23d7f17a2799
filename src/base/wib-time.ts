/**
 * The platform writes times as `YYYY-MM-DD HH:MM:SS` in WIB (Asia/Jakarta, UTC+7, no DST).
 * Spec: messaging-service-interface.md, "Message, current form", field `sent_at`.
 */
const WIB_OFFSET_MS = 7 * 60 * 60 * 1000;
const WIB_PATTERN = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?$/;

/** Parses a WIB wall-clock string into an instant; returns undefined when it is not one. */
export function parseWib(value: string): Date | undefined {
  const m = WIB_PATTERN.exec(value.trim());
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac] = m;
  const ms = frac ? Math.floor(Number(`0.${frac}`) * 1000) : 0;
  const utc = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), ms);
  const date = new Date(utc - WIB_OFFSET_MS);
  // Reject rollovers such as 2026-02-30 or 25:00:00.
  const back = new Date(utc);
  if (
    back.getUTCFullYear() !== Number(y) ||
    back.getUTCMonth() !== Number(mo) - 1 ||
    back.getUTCDate() !== Number(d) ||
    back.getUTCHours() !== Number(h) ||
    back.getUTCMinutes() !== Number(mi) ||
    back.getUTCSeconds() !== Number(s)
  ) {
    return undefined;
  }
  return date;
}

/** Formats an instant as the platform does: `YYYY-MM-DD HH:MM:SS` in WIB. */
export function formatWib(instant: Date): string {
  const wib = new Date(instant.getTime() + WIB_OFFSET_MS);
  const pad = (n: number) => String(n).padStart(2, '0');
  return (
    `${wib.getUTCFullYear()}-${pad(wib.getUTCMonth() + 1)}-${pad(wib.getUTCDate())} ` +
    `${pad(wib.getUTCHours())}:${pad(wib.getUTCMinutes())}:${pad(wib.getUTCSeconds())}`
  );
}
