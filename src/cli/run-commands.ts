import type { Command } from 'commander';
import { BridgeListenError } from '../bridge/listen-error.js';
import { type BridgeMode, runBridge } from '../bridge/run-bridge.js';
import { ConfigError } from '../config/config-error.js';
import { resolveConfigPath } from '../config/resolve-config-path.js';
import { CliError } from './cli-error.js';
import { EXIT } from './exit-codes.js';
import type { CliIo } from './io.js';

const MODES: { mode: BridgeMode; description: string; example: string }[] = [
  {
    mode: 'start',
    description: 'run the receiver and the worker in one process (the sidecar default)',
    example: 'convo-bridge start --config config/bridge.yaml',
  },
  {
    mode: 'serve',
    description: 'run only the webhook receiver (scale it apart from the workers)',
    example: 'convo-bridge serve --config config/bridge.yaml',
  },
  {
    mode: 'work',
    description: 'run only the worker (run as many as you like; order per conversation is kept)',
    example: 'convo-bridge work --config config/bridge.yaml --port 9090',
  },
];

/**
 * `start`, `serve` and `work`: the long-running commands. They share options and one runner
 * (src/bridge/run-bridge.ts), so they live in one file. They return when the bridge has stopped
 * (SIGTERM or SIGINT: graceful; a second signal forces).
 */
export function registerRunCommands(program: Command, io: CliIo): void {
  for (const { mode, description, example } of MODES) {
    const command = program
      .command(mode)
      .description(description)
      .option('-c, --config <file>', 'config file (default: config/bridge.yaml, then $CONVO_BRIDGE_CONFIG)');
    if (mode === 'work') {
      command.option('-p, --port <port>', 'serve /healthz, /readyz and /metrics on this port');
    }
    command
      .addHelpText(
        'after',
        `
Example:
  $ ${example}

Stops gracefully on SIGTERM or SIGINT (readiness off, HTTP drained, in-flight jobs finished within
worker.shutdown_grace); a second signal exits at once. Exit codes: 0 stopped cleanly, 1 invalid
config, 2 a port unavailable. Redis down is not an exit: the process stays up (/healthz 200, /readyz
503 with the reason, webhooks 503), warns once per 30 s, and resumes by itself when Redis is back.`,
      )
      .action(async (options: { config?: string; port?: string }) => {
        const configPath = resolveConfigPath(options.config);
        if (configPath === undefined) {
          throw new CliError(
            'no config file: pass --config FILE, create config/bridge.yaml, or set CONVO_BRIDGE_CONFIG',
          );
        }
        const port = options.port === undefined ? undefined : Number(options.port);
        if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65_535)) {
          throw new CliError(`--port must be a port number (0-65535), not "${options.port}"`);
        }
        let bridge: Awaited<ReturnType<typeof runBridge>>;
        try {
          bridge = await runBridge({
            mode,
            configPath,
            handleSignals: true,
            ...(port === undefined ? {} : { port }),
          });
        } catch (error) {
          if (error instanceof ConfigError) throw new CliError(error.message, { cause: error });
          if (error instanceof BridgeListenError) {
            throw new CliError(error.message, { exitCode: EXIT.unavailable, cause: error });
          }
          if (error instanceof Error && 'code' in error && error.code === 'EADDRINUSE') {
            throw new CliError(`the port is already in use: ${error.message}`, {
              exitCode: EXIT.unavailable,
              cause: error,
            });
          }
          throw error;
        }
        if (bridge.url) io.stdout(`convo-bridge ${mode}: listening on ${bridge.url}\n`);
        process.exitCode = await bridge.stopped;
        // Everything is closed; a connection still retrying an unreachable Redis must not keep
        // the process alive after a stop (a SIGTERM while Redis is down would otherwise hang).
        setTimeout(() => process.exit(), 1_000).unref();
      });
  }
}
