import { ConvoBridgeError } from '../base/errors.js';

/** Stable codes of the errors the emulator throws on purpose, with the admin API's HTTP status for each. */
export const EMULATOR_ERROR_STATUS = {
  /** Options given to startEmulator or the CLI are invalid. */
  EMULATOR_OPTIONS_INVALID: 400,
  /** A seed file could not be read, parsed or validated. */
  EMULATOR_SEED_INVALID: 400,
  /** An admin request body is invalid. */
  EMULATOR_BAD_REQUEST: 400,
  /** An admin request names a conversation, message, delivery or fault that does not exist. */
  EMULATOR_NOT_FOUND: 404,
  /** An admin action does not fit the current state (duplicate id, the AI is quiet). */
  EMULATOR_CONFLICT: 409,
  /** The HTTP server could not listen (port in use, no permission). */
  EMULATOR_LISTEN_FAILED: 500,
} as const;
export type EmulatorErrorCode = keyof typeof EMULATOR_ERROR_STATUS;

export class EmulatorError extends ConvoBridgeError {
  declare readonly code: EmulatorErrorCode;

  constructor(code: EmulatorErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, { code, cause: options.cause });
  }

  /** The HTTP status the admin API answers this error with. */
  get httpStatus(): number {
    return EMULATOR_ERROR_STATUS[this.code];
  }
}
