import { ConvoBridgeError } from '../base/errors.js';

/**
 * Stable codes of the receiver's own errors. Each message says what failed, where, and how to fix
 * it; none ever contains a webhook secret.
 */
export type ReceiverErrorCode =
  /** createReceiver was given options it cannot work with. */
  | 'RECEIVER_CONFIG'
  /** Redis could not take an event (down, slow, or refusing writes) within the enqueue timeout. */
  | 'RECEIVER_REDIS_UNAVAILABLE'
  /** No quarantine entry under that id (never stored, replayed, purged, or pushed out by newer ones). */
  | 'QUARANTINE_NOT_FOUND'
  /** A quarantined body still cannot be turned into an event (still unknown, or stored truncated). */
  | 'QUARANTINE_NOT_REPLAYABLE';

export class ReceiverError extends ConvoBridgeError {
  declare readonly code: ReceiverErrorCode;

  constructor(message: string, options: { code: ReceiverErrorCode; cause?: unknown }) {
    super(message, options);
  }
}
