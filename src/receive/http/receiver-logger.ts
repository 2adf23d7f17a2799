import { type Logger, pino } from 'pino';

/**
 * Values that never reach a log line. A pino child's `redact` replaces its parent's, so this list
 * also covers the usual secret-bearing names, not only the webhook's headers.
 */
const REDACTED_PATHS = [
  'headers.authorization',
  'headers.secret',
  'req.headers.authorization',
  'req.headers.secret',
  'authorization',
  'secret',
  'secrets',
  'password',
  '*.authorization',
  '*.secret',
  '*.secrets',
  '*.password',
  '*.secretKey',
  '*.secret_key',
];

/** The receiver's logger: a child of the caller's (silent when none) that never logs a secret. */
export function receiverLogger(parent: Logger | undefined): Logger {
  return (parent ?? pino({ level: 'silent' })).child(
    { component: 'receiver' },
    { redact: { paths: REDACTED_PATHS, censor: '[redacted]' } },
  );
}
