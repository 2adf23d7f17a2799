import pino, { type Logger, type LoggerOptions } from 'pino';

/**
 * The process logger: JSON lines for machines, pretty when a person watches a terminal.
 * Secrets are removed by path (headers, config fields) and phone numbers are masked in every
 * string, because customer texts and sender names routinely contain them.
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

function scrub(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return maskPhones(value);
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => scrub(item, depth + 1));
  if (value instanceof Error) return value;
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
    hooks: {
      logMethod(args, method) {
        const masked = args.map((arg) => (typeof arg === 'string' ? maskPhones(arg) : arg)) as Parameters<
          typeof method
        >;
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
