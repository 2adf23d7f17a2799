/**
 * Reads counters out of a Prometheus text exposition (the bridge's `GET /metrics`), pure. Only what
 * the demo's summary needs: the sum of one metric's samples whose labels include the given ones.
 */
export interface MetricSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE = /^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parsePrometheusText(text: string): MetricSample[] {
  const samples: MetricSample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    if (!match) continue;
    const [, name = '', labelText = '', valueText = ''] = match;
    const value = Number(valueText);
    if (!Number.isFinite(value)) continue;
    const labels: Record<string, string> = {};
    for (const label of labelText.matchAll(LABEL)) {
      const [, key = '', escaped = ''] = label;
      labels[key] = escaped.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
    }
    samples.push({ name, labels, value });
  }
  return samples;
}

/** Sum of `name`'s samples whose labels include every pair of `where` (0 when there are none). */
export function sumMetric(
  samples: readonly MetricSample[],
  name: string,
  where: Record<string, string> = {},
): number {
  let sum = 0;
  for (const sample of samples) {
    if (sample.name !== name) continue;
    if (Object.entries(where).every(([key, value]) => sample.labels[key] === value)) sum += sample.value;
  }
  return sum;
}
