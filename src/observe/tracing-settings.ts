/** The `tracing:` block of the config, after parsing (config-schema.ts). */
export interface TracingConfig {
  /** null: not written (on when an OTLP endpoint variable is set). */
  enabled: boolean | null;
  /** The full OTLP/HTTP traces URL, e.g. http://localhost:4318/v1/traces; null: from the environment. */
  endpoint: string | null;
  serviceName: string | null;
}

export type TracingSettings =
  | { enabled: false; reason: string }
  | {
      enabled: true;
      /** Where spans are POSTed (OTLP/HTTP, JSON). */
      url: string;
      serviceName: string;
      /** Why tracing is on, for `validate` and the start-up log. */
      because: string;
    };

/** The OTLP/HTTP default when tracing is switched on without an address (the spec's default). */
const DEFAULT_ENDPOINT = 'http://localhost:4318';
const TRACES_PATH = '/v1/traces';

/**
 * Decides whether tracing is on, and where spans go, from the config and the standard OpenTelemetry
 * variables (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/):
 *  - `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none` turns it off, whatever the config says;
 *  - `tracing.enabled: false` turns it off; `true` turns it on;
 *  - unset, it is on when `tracing.endpoint`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or
 *    `OTEL_EXPORTER_OTLP_ENDPOINT` is set: off by default.
 * The address: `tracing.endpoint`, else `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as is), else
 * `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`, else http://localhost:4318/v1/traces.
 * The service name: `tracing.service_name`, else `OTEL_SERVICE_NAME`, else `convo-bridge`.
 */
export function resolveTracing(config: TracingConfig, env: NodeJS.ProcessEnv): TracingSettings {
  const value = (name: string) => {
    const text = env[name]?.trim();
    return text === undefined || text === '' ? undefined : text;
  };
  if (value('OTEL_SDK_DISABLED')?.toLowerCase() === 'true') {
    return { enabled: false, reason: 'OTEL_SDK_DISABLED=true' };
  }
  if (value('OTEL_TRACES_EXPORTER')?.toLowerCase() === 'none') {
    return { enabled: false, reason: 'OTEL_TRACES_EXPORTER=none' };
  }
  if (config.enabled === false) return { enabled: false, reason: 'tracing.enabled is false' };
  const tracesEndpoint = value('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const endpoint = value('OTEL_EXPORTER_OTLP_ENDPOINT');
  let url: string;
  let source: string;
  if (config.endpoint !== null) {
    url = config.endpoint;
    source = 'tracing.endpoint';
  } else if (tracesEndpoint !== undefined) {
    url = tracesEndpoint;
    source = 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT';
  } else if (endpoint !== undefined) {
    url = `${endpoint.replace(/\/+$/, '')}${TRACES_PATH}`;
    source = 'OTEL_EXPORTER_OTLP_ENDPOINT';
  } else {
    if (config.enabled !== true) {
      return {
        enabled: false,
        reason: 'off by default: set OTEL_EXPORTER_OTLP_ENDPOINT or tracing.enabled to turn it on',
      };
    }
    url = `${DEFAULT_ENDPOINT}${TRACES_PATH}`;
    source = 'the OTLP default address';
  }
  const because = config.enabled === true ? `tracing.enabled, spans to ${source}` : `${source} is set`;
  return {
    enabled: true,
    url,
    serviceName: config.serviceName ?? value('OTEL_SERVICE_NAME') ?? 'convo-bridge',
    because,
  };
}

/** One line for `validate` and the start-up log, e.g. `on, OTLP/HTTP to http://...`. */
export function describeTracing(settings: TracingSettings): string {
  if (!settings.enabled) return `off (${settings.reason})`;
  return `on, OTLP/HTTP JSON to ${withoutCredentials(settings.url)} as service "${settings.serviceName}" (${settings.because})`;
}

/** Collectors take credentials in headers (OTEL_EXPORTER_OTLP_HEADERS); one in the URL is not shown. */
function withoutCredentials(text: string): string {
  try {
    const url = new URL(text);
    url.username = '';
    url.password = '';
    return url.href.replace(/\/$/, '');
  } catch {
    return text;
  }
}
