/**
 * Base of every error convo-bridge throws on purpose. `code` is stable and machine-readable;
 * `message` says what failed, where, and what to do. `cause` is always kept.
 */
export class ConvoBridgeError extends Error {
  readonly code: string;

  constructor(message: string, options: { code: string; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = options.code;
  }
}

/** Type guard that survives duplicated module instances (checks the shape, not only the prototype). */
export function isConvoBridgeError(value: unknown): value is ConvoBridgeError {
  return value instanceof ConvoBridgeError;
}

/** A short, log-safe description of an unknown thrown value. */
export function describeError(value: unknown): string {
  if (value instanceof Error) return value.message;
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
