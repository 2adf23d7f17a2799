import { describe, expect, it } from 'vitest';
import { summarize } from '../../../src/cli/validate-command.js';
import { ConfigError, formatConfigIssue } from '../../../src/config/config-error.js';
import { parseConfigText } from '../../../src/config/load-config.js';
import { carrierOf, installTracing, rememberCarrier } from '../../../src/observe/trace-context.js';
import {
  describeTracing,
  resolveTracing,
  type TracingConfig,
} from '../../../src/observe/tracing-settings.js';
import { EventBatchDataSchema } from '../../../src/queue/event-job.js';
import { makeEvent } from '../../support/make-event.js';

const HEAD =
  'platform:\n  base_url: https://api.example.com\n  auth: { business_id: b, secret: s }\nreceiver:\n  secrets: [ w ]\n';

function load(text: string) {
  return parseConfigText(`${HEAD}${text}`, { fileName: 'tracing.yaml', env: {} });
}

function issuesOf(text: string): string[] {
  try {
    load(text);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return error.issues.map(formatConfigIssue);
  }
  throw new Error('the text loaded, but it should not have');
}

const UNSET: TracingConfig = { enabled: null, endpoint: null, serviceName: null };

describe('tracing: in the config', () => {
  it('is unset by default (on only when an OTLP variable says so)', () => {
    expect(load('').config.tracing).toEqual(UNSET);
  });

  it('maps enabled, endpoint and service_name', () => {
    const text =
      'tracing:\n  enabled: true\n  endpoint: http://collector:4318/v1/traces\n  service_name: bridge-eu\n';
    expect(load(text).config.tracing).toEqual({
      enabled: true,
      endpoint: 'http://collector:4318/v1/traces',
      serviceName: 'bridge-eu',
    });
  });

  it.each([
    ['a non-boolean enabled', 'tracing:\n  enabled: yes please\n', 'tracing.enabled'],
    [
      'an endpoint that is not http(s)',
      'tracing:\n  endpoint: grpc://collector:4317\n',
      'tracing.endpoint: must be an http:// or https:// URL, e.g. http://localhost:4318/v1/traces',
    ],
    ['an empty service name', 'tracing:\n  service_name: ""\n', 'tracing.service_name: must not be empty'],
    ['an unknown key', 'tracing:\n  exporter: jaeger\n', 'exporter'],
  ])('rejects %s', (_name, text, expected) => {
    const issues = issuesOf(text);
    expect(issues).toHaveLength(1);
    expect(issues[0]).toContain(expected);
  });
});

describe('resolveTracing: off by default, on with the standard variables or the config', () => {
  const cases: [string, TracingConfig, Record<string, string>, string][] = [
    ['nothing set', UNSET, {}, 'off'],
    ['an empty endpoint variable', UNSET, { OTEL_EXPORTER_OTLP_ENDPOINT: ' ' }, 'off'],
    [
      'OTEL_EXPORTER_OTLP_ENDPOINT (the traces path is appended)',
      UNSET,
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' },
      'http://collector:4318/v1/traces',
    ],
    [
      'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (used as is, before the generic one)',
      UNSET,
      {
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:9999/custom',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      },
      'http://traces:9999/custom',
    ],
    [
      'tracing.endpoint (before the variables)',
      { ...UNSET, endpoint: 'https://otel.example.com/v1/traces' },
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' },
      'https://otel.example.com/v1/traces',
    ],
    [
      'tracing.enabled alone (the OTLP default address)',
      { ...UNSET, enabled: true },
      {},
      'http://localhost:4318/v1/traces',
    ],
    [
      'tracing.enabled: false over an endpoint variable',
      { ...UNSET, enabled: false },
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' },
      'off',
    ],
    [
      'OTEL_SDK_DISABLED=true over tracing.enabled',
      { ...UNSET, enabled: true },
      { OTEL_SDK_DISABLED: 'TRUE' },
      'off',
    ],
    [
      'OTEL_TRACES_EXPORTER=none over an endpoint variable',
      UNSET,
      { OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' },
      'off',
    ],
    [
      'OTEL_SDK_DISABLED=false (only "true" disables)',
      UNSET,
      { OTEL_SDK_DISABLED: 'false', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' },
      'http://collector:4318/v1/traces',
    ],
  ];
  it.each(cases)('%s', (_name, config, env, expected) => {
    const settings = resolveTracing(config, env);
    expect(settings.enabled ? settings.url : 'off').toBe(expected);
  });

  it('takes the service name from the config, then OTEL_SERVICE_NAME, then convo-bridge', () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SERVICE_NAME: 'from-env' };
    const name = (config: TracingConfig, e: Record<string, string>) => {
      const settings = resolveTracing(config, e);
      return settings.enabled ? settings.serviceName : null;
    };
    expect(name({ ...UNSET, serviceName: 'from-config' }, env)).toBe('from-config');
    expect(name(UNSET, env)).toBe('from-env');
    expect(name(UNSET, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toBe('convo-bridge');
  });

  it('says why it is on or off, without credentials in the address', () => {
    expect(
      describeTracing(resolveTracing(UNSET, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://user:pw@c:4318' })),
    ).toBe(
      'on, OTLP/HTTP JSON to http://c:4318/v1/traces as service "convo-bridge" (OTEL_EXPORTER_OTLP_ENDPOINT is set)',
    );
    expect(describeTracing(resolveTracing({ ...UNSET, enabled: true }, { OTEL_SDK_DISABLED: 'true' }))).toBe(
      'off (OTEL_SDK_DISABLED=true)',
    );
  });
});

describe('validate mentions tracing', () => {
  it('when it is on, and not when it is off by default', () => {
    const loaded = load('');
    expect(summarize(loaded, {})).not.toContain('  tracing:');
    expect(summarize(loaded, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toContain(
      '  tracing: on, OTLP/HTTP JSON to http://c:4318/v1/traces',
    );
  });

  it('when the config asks for it and a variable turns it off', () => {
    const loaded = load('tracing:\n  enabled: true\n');
    expect(summarize(loaded, { OTEL_SDK_DISABLED: 'true' })).toContain(
      '  tracing: off (OTEL_SDK_DISABLED=true)',
    );
  });
});

describe('the trace carrier of a batch item', () => {
  const event = makeEvent();

  it('is optional (jobs of a bridge without tracing parse) and a malformed one is dropped, not fatal', () => {
    const parse = (trace: unknown) =>
      EventBatchDataSchema.parse({
        events: [{ arrival: 1, event, ...(trace === undefined ? {} : { trace }) }],
      }).events[0]?.trace;
    expect(parse(undefined)).toBeUndefined();
    const carrier = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };
    expect(parse(carrier)).toEqual(carrier);
    expect(parse({ traceparent: 42 })).toBeUndefined();
    expect(parse('not an object')).toBeUndefined();
  });

  it('is only handed out while tracing is installed', () => {
    const carrier = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };
    rememberCarrier(event, carrier);
    expect(carrierOf(event)).toBeUndefined();
    installTracing({} as never);
    try {
      rememberCarrier(event, carrier);
      expect(carrierOf(event)).toEqual(carrier);
    } finally {
      installTracing(undefined);
    }
    expect(carrierOf(event)).toBeUndefined();
  });
});
