import pino, { type Logger, type LoggerOptions } from 'pino';
import { maskCardNumbers, maskEmails, maskNiks } from '../base/personal-data.js';

/**
 * The process logger: JSON lines for machines, pretty when a person watches a terminal.
 * Secrets are removed by path (headers, config fields); phone numbers, e-mail addresses, card
 * numbers and NIKs are masked in every string and error, should one slip into a line.
 */
export const REDACT_PATHS = [
  'authorization',
  'secret',
  'password',
  '*.authorization',
  '*.secret',
  '*.password',
  '*.secret_key',
  '*.secretKey',
  'req.headers.authorization',
  'req.headers.secret',
  'req.headers["secret_key"]',
  'headers.authorization',
  'headers.secret',
  'config.platform.auth.secret',
  'config.receiver.secrets',
];

const INTERNATIONAL = /\+\d[\d\s().-]{6,18}\d/g;
const LOCAL_MOBILE = /\b0\d{2,4}[\s.-]?\d{3,4}[\s.-]?\d{3,5}\b/g;

/** Masks phone-number-looking runs in a string: keeps the first 3 and last 2 digits. */
export function maskPhones(text: string): string {
  const mask = (match: string) => {
    const digits = match.replace(/\D/g, '');
    if (digits.length < 8) return match;
    return `${match.startsWith('+') ? '+' : ''}${digits.slice(0, 3)}***${digits.slice(-2)}`;
  };
  return text.replace(INTERNATIONAL, mask).replace(LOCAL_MOBILE, mask);
}

/**
 * A log string with personal data masked: e-mail addresses, card numbers and NIKs (as
 * record.redact recognises them), then phone numbers (first 3 and last 2 digits kept). A last line
 * of defence: the log lines themselves are written to carry no texts, names or labels at all.
 */
export function maskForLog(text: string): string {
  if (!/[\d@]/.test(text)) return text;
  return maskPhones(maskNiks(maskCardNumbers(maskEmails(text))));
}

/**
 * An error as a log line shows it: its type, code, message and stack (masked), and the same of its
 * causes; nothing else. pino's default serializer copies every enumerable property, and some
 * carry what was sent: ioredis puts a failed command's arguments (an event's JSON) on its errors,
 * got its request options and response.
 */
export function serializeError(value: unknown, depth = 0): unknown {
  if (!(value instanceof Error)) return typeof value === 'string' ? maskForLog(value) : value;
  const code = (value as { code?: unknown }).code;
  return {
    type: value.name,
    message: maskForLog(value.message),
    ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
    ...(value.stack ? { stack: maskForLog(value.stack) } : {}),
    ...(value.cause !== undefined && depth < 3 ? { cause: serializeError(value.cause, depth + 1) } : {}),
  };
}

function scrub(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return maskForLog(value);
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => scrub(item, depth + 1));
  if (value instanceof Error) return serializeError(value);
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = scrub(item, depth + 1);
  return out;
}

export interface LoggerSettings {
  level?: string;
  /** Force pretty (true) or JSON (false); default: pretty when stdout is a TTY. */
  pretty?: boolean;
  name?: string;
  destination?: pino.DestinationStream;
}

export function createLogger(settings: LoggerSettings = {}): Logger {
  const options: LoggerOptions = {
    name: settings.name ?? 'convo-bridge',
    level: settings.level ?? process.env.LOG_LEVEL ?? 'info',
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    formatters: {
      log: (object) => scrub(object, 0) as Record<string, unknown>,
    },
    serializers: { err: serializeError, error: serializeError },
    hooks: {
      logMethod(args, method) {
        // log.error(error): pino would take the message from the error unmasked.
        const first = args[0] instanceof Error ? [{ err: args[0] }, args[1] ?? args[0].message] : [];
        const masked = [...first, ...args.slice(first.length > 0 ? 2 : 0)].map((arg) =>
          typeof arg === 'string' ? maskForLog(arg) : arg,
        ) as Parameters<typeof method>;
        method.apply(this, masked);
      },
    },
  };
  const pretty = settings.pretty ?? (process.stdout.isTTY === true && !settings.destination);
  if (pretty) {
    return pino({
      ...options,
      transport: {
        target: 'pino-pretty',
        options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' },
      },
    });
  }
  return settings.destination ? pino(options, settings.destination) : pino(options);
}

/** The logger methods a run uses. */
export type RunLogger = Pick<Logger, 'info' | 'warn' | 'error' | 'debug' | 'isLevelEnabled'>;

/**
 * A child logger made only when the first line is written. Most runs write no line at the
 * default level, and a pino child per event showed in the worker's CPU profile.
 */
export function lazyChild(log: Logger, bindings: () => Record<string, unknown>): RunLogger {
  let child: Logger | undefined;
  const get = () => {
    child ??= log.child(bindings());
    return child;
  };
  type Args = Parameters<Logger['info']>;
  return {
    info: (...args: Args) => get().info(...args),
    warn: (...args: Args) => get().warn(...args),
    error: (...args: Args) => get().error(...args),
    debug: (...args: Args) => get().debug(...args),
    isLevelEnabled: (level) => log.isLevelEnabled(level),
  } as RunLogger;
}
