import type { Command } from 'commander';
import { DemoError } from '../demo/demo-error.js';
import { CliError } from './cli-error.js';
import { EXIT } from './exit-codes.js';
import type { CliIo } from './io.js';

const HELP = `
Plays a scripted morning of customer conversations against the platform emulator and shows what
the bridge did, checked from the outside (the emulator's inbox and a CRM sink): complaints escalated
and forwarded, catalogue requests answered, after-hours replies, an unsure AI handed to the team, a
reply blocked by the closed 24-hour WhatsApp window, an escalation timer that fires and one an agent
cancels, with platform faults and webhook redeliveries thrown in. Everything must happen exactly once.

Needs nothing but \`npm install\`: it uses REDIS_URL when set, else starts a private redis-server
(apt-get install redis-server), and picks free ports.

Examples:
  $ npm run demo
  $ convo-bridge demo --keep             # keep the emulator, inbox and bridge running until Ctrl+C
  $ convo-bridge demo --port 8080 --no-progress
  $ REDIS_URL=redis://127.0.0.1:6379 convo-bridge demo

Exit codes: 0 every expected action happened exactly once, 1 something was missing or duplicated
(listed), 2 no Redis (or a part could not start), 3 a bug.`;

function waitForSignal(): { promise: Promise<NodeJS.Signals>; dispose: () => void } {
  let dispose = () => {};
  const promise = new Promise<NodeJS.Signals>((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      dispose();
      resolve(signal);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    dispose = () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    };
  });
  return { promise, dispose };
}

export function registerDemoCommand(program: Command, io: CliIo): void {
  program
    .command('demo')
    .description(
      'play a scripted morning against the emulator and verify the bridge did everything exactly once',
    )
    .option('--keep', 'keep everything running after the report, until Ctrl+C')
    .option('--port <n>', 'port of the bridge (default: any free port)')
    .option(
      '--no-progress',
      'plain lines instead of a progress bar (the default when stdout is not a terminal)',
    )
    .addHelpText('after', HELP)
    .action(async (flags: { keep?: boolean; port?: string; progress: boolean }) => {
      let port: number | undefined;
      if (flags.port !== undefined) {
        port = Number(flags.port);
        if (!/^\d+$/.test(flags.port) || port > 65_535) {
          throw new CliError(`--port must be a port number (0-65535), not "${flags.port}"`);
        }
      }
      // Ctrl+C during the run stops it cleanly; with --keep, it ends the keep phase.
      const abort = new AbortController();
      const signal = waitForSignal();
      void signal.promise.then(() => abort.abort());
      try {
        // Loaded on use: the demo brings the emulator and the table libraries, which `start` never needs.
        const { runDemo } = await import('../demo/run-demo.js');
        const result = await runDemo({
          keep: flags.keep === true,
          ...(port === undefined ? {} : { port }),
          progressBar: flags.progress && process.stdout.isTTY === true,
          ...(process.stdout.isTTY && process.stdout.columns ? { columns: process.stdout.columns } : {}),
          env: process.env,
          stdout: io.stdout,
          signal: abort.signal,
          waitForStop: () => signal.promise,
        });
        if (result.totals === null) {
          throw new CliError('interrupted', { exitCode: EXIT.invalidInput, code: 'DEMO_INTERRUPTED' });
        }
        if (!result.ok) {
          throw new CliError(
            `the demo's outcome is wrong: ${result.problems.length} problem(s), listed above`,
            {
              exitCode: EXIT.invalidInput,
              code: 'DEMO_OUTCOME',
            },
          );
        }
        process.exitCode = EXIT.ok;
      } catch (error) {
        if (error instanceof DemoError) {
          throw new CliError(error.message, {
            exitCode: error.code === 'DEMO_SCRIPT_INVALID' ? EXIT.invalidInput : EXIT.unavailable,
            code: error.code,
            cause: error,
          });
        }
        throw error;
      } finally {
        signal.dispose();
      }
    });
}
