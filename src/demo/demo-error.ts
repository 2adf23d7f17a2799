import { ConvoBridgeError } from '../base/errors.js';

export type DemoErrorCode =
  /** Neither REDIS_URL nor a `redis-server` binary: the demo cannot store anything. */
  | 'DEMO_REDIS_MISSING'
  /** A part of the demo (Redis, emulator, bridge, CRM sink) did not start. */
  | 'DEMO_START_FAILED'
  /** The script itself is inconsistent with config/demo.yaml (a rule or timer it relies on is gone). */
  | 'DEMO_SCRIPT_INVALID'
  /** A step's effects did not appear in time. */
  | 'DEMO_STEP_TIMEOUT';

/** Errors of `convo-bridge demo`; the message says what failed and how to fix it. */
export class DemoError extends ConvoBridgeError {
  declare readonly code: DemoErrorCode;

  constructor(code: DemoErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, { code, cause: options.cause });
  }
}
