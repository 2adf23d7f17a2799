import { ConvoBridgeError } from '../base/errors.js';
import { EXIT, type ExitCode } from './exit-codes.js';

/** An error a command reports to the user with a chosen exit code and no stack trace. */
export class CliError extends ConvoBridgeError {
  readonly exitCode: ExitCode;

  constructor(message: string, options: { exitCode?: ExitCode; cause?: unknown; code?: string } = {}) {
    super(message, { code: options.code ?? 'CLI', cause: options.cause });
    this.exitCode = options.exitCode ?? EXIT.invalidInput;
  }
}
