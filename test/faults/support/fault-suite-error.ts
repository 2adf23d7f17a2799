import { ConvoBridgeError } from '../../../src/base/errors.js';

/** Something the fault suite itself could not do (a process would not start, a wait ran out). */
export class FaultSuiteError extends ConvoBridgeError {
  constructor(code: string, message: string, options: { cause?: unknown } = {}) {
    super(message, { code: `FAULTS_${code}`, cause: options.cause });
  }
}
