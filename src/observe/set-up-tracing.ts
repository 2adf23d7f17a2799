import type { Logger } from 'pino';
import { packageVersion } from '../base/package-version.js';
import { installTracing } from './trace-context.js';
import { describeTracing, resolveTracing, type TracingConfig } from './tracing-settings.js';

export interface TracingHandle {
  /** Exports the spans still buffered (bounded) and uninstalls tracing. */
  shutdown(): Promise<void>;
}

/**
 * Turns tracing on for this process when the config or the OTEL_* variables ask for it
 * (tracing-settings.ts), and otherwise does nothing: the OpenTelemetry SDK is imported only here,
 * dynamically, so a bridge without tracing never loads it (the `start` path and the per-event cost
 * stay as they were). Call it before the receiver and the worker are built.
 */
export async function setUpTracing(
  config: TracingConfig,
  env: NodeJS.ProcessEnv,
  options: { mode: string; log: Logger },
): Promise<TracingHandle | undefined> {
  const settings = resolveTracing(config, env);
  if (!settings.enabled) return undefined;
  const { startTracing } = await import('./tracing.js');
  const tracing = startTracing(settings, {
    version: packageVersion(),
    mode: options.mode,
    warn: (message) => options.log.warn(message),
  });
  installTracing(tracing);
  options.log.info(`tracing ${describeTracing(settings)}`);
  return {
    async shutdown() {
      await tracing.shutdown();
      installTracing(undefined);
    },
  };
}
