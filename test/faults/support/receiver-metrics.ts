/**
 * Reads counters from a bridge's Prometheus endpoint (`GET /metrics` of `serve`/`start`, or of
 * `work --port`). Text format: `name{label="value",...} number`.
 */
export async function readMetrics(origin: string): Promise<string> {
  const response = await fetch(`${origin}/metrics`, { signal: AbortSignal.timeout(10_000) });
  return response.text();
}

/** Sum of a metric's samples whose labels include every given label (0 when absent). */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const match = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!match || match[1] !== name) continue;
    const labelText = match[2] ?? '';
    if (Object.entries(labels).every(([k, v]) => labelText.includes(`${k}="${v}"`))) {
      sum += Number(match[3]);
    }
  }
  return sum;
}
