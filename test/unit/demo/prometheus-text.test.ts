import { describe, expect, it } from 'vitest';
import { parsePrometheusText, sumMetric } from '../../../src/demo/prometheus-text.js';

const TEXT = `# HELP convo_bridge_webhooks_total Webhook requests by outcome.
# TYPE convo_bridge_webhooks_total counter
convo_bridge_webhooks_total{outcome="queued"} 11
convo_bridge_webhooks_total{outcome="duplicate"} 3
convo_bridge_platform_calls_total{operation="sendMessage",result="ok"} 4
convo_bridge_platform_calls_total{operation="sendMessage",result="OUTCOME_UNKNOWN"} 2
convo_bridge_platform_calls_total{operation="addNote",result="ok"} 6 1700000000000
convo_bridge_label_escape{text="a \\"quoted\\" \\\\ value"} 1
process_cpu_seconds_total 0.25
not a sample line
broken_value{a="b"} NaN-ish
`;

describe('parsePrometheusText / sumMetric', () => {
  const samples = parsePrometheusText(TEXT);

  it.each([
    ['one labelled sample', 'convo_bridge_webhooks_total', { outcome: 'queued' }, 11],
    ['all samples of a metric', 'convo_bridge_webhooks_total', {}, 14],
    ['samples matching one of several labels', 'convo_bridge_platform_calls_total', { result: 'ok' }, 10],
    ['with a timestamp after the value', 'convo_bridge_platform_calls_total', { operation: 'addNote' }, 6],
    ['an unlabelled sample', 'process_cpu_seconds_total', {}, 0.25],
    ['a metric that is not there', 'convo_bridge_dead_letters_total', {}, 0],
    ['a label value that is not there', 'convo_bridge_webhooks_total', { outcome: 'unauthorized' }, 0],
  ])('%s', (_name, metric, where, value) => {
    expect(sumMetric(samples, metric, where)).toBe(value);
  });

  it('unescapes label values and skips lines that are not samples', () => {
    expect(samples.find((s) => s.name === 'convo_bridge_label_escape')?.labels.text).toBe(
      'a "quoted" \\ value',
    );
    expect(samples.map((s) => s.name)).not.toContain('not');
    expect(samples.map((s) => s.name)).not.toContain('broken_value');
  });
});
