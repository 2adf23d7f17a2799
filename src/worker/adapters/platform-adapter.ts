import type { PlatformClient } from '../../platform/create-platform-client.js';
import { OPERATION_SAFETY } from '../../platform/operations.js';
import { PlatformError } from '../../platform/platform-error.js';
import { ReplyWindowClosedError } from '../../platform/reply-window-closed-error.js';
import type { FailureClass } from '../failures/classify-failure.js';
import type { PlatformPort } from '../ports.js';

/** The platform client seen through the worker's port. */
export function platformPort(client: PlatformClient): PlatformPort {
  return {
    sendMessage: (input, options) => client.sendMessage(input, options),
    addNote: (conversationId, note) => client.addNote(conversationId, note),
    markNeedHuman: (conversationId) => client.markNeedHuman(conversationId),
    history: (conversationId) => client.iterateMessages(conversationId),
  };
}

/**
 * Maps the client's typed errors onto what the worker does about them (failures/classify-failure.ts).
 * A CONTRACT error on a call that creates something (send, note) came with a 2xx answer, so the
 * platform may well have acted: it is treated as an unknown outcome and reconciled.
 */
export function classifyPlatformError(error: unknown): FailureClass | undefined {
  if (error instanceof ReplyWindowClosedError) {
    return { kind: 'window-closed', code: error.code, message: error.message };
  }
  if (!(error instanceof PlatformError)) return undefined;
  const base = { code: error.code, message: error.message };
  switch (error.code) {
    case 'OUTCOME_UNKNOWN':
      return { kind: 'unknown-outcome', ...base };
    case 'CONTRACT':
      return OPERATION_SAFETY[error.operation] === 'creates'
        ? { kind: 'unknown-outcome', ...base }
        : { kind: 'transient', ...base };
    case 'RATE_LIMITED':
      return { kind: 'rate-limited', ...base, retryAfterMs: error.retryAfterMs ?? 1_000 };
    case 'AUTH':
    case 'PERMISSION':
      return { kind: 'auth', ...base };
    case 'VALIDATION':
    case 'NOT_FOUND':
      return { kind: 'rejected', ...base };
    case 'SERVER':
    case 'NETWORK':
    case 'TIMEOUT':
      return { kind: 'transient', ...base };
  }
}
