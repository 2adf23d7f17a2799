import { type Command, Option } from 'commander';
import { EmulatorError } from '../emulator/emulator-error.js';
import type { EmulatorOptions } from '../emulator/emulator-options.js';
import type { startEmulator } from '../emulator/start-emulator.js';
import type { WebhookFailure } from '../emulator/webhook-dispatcher.js';
import { CliError } from './cli-error.js';
import { EXIT } from './exit-codes.js';
import type { CliIo } from './io.js';

interface EmulatorFlags {
  port: string;
  form: 'current' | 'earlier';
  businessId: string;
  secret: string;
  businessName?: string;
  webhookUrl?: string;
  webhookSecret?: string;
  handoverWebhookUrl?: string;
  handoverWebhookSecret?: string;
  /** commander's `--no-api-feature`: false when given. */
  apiFeature?: boolean;
  echoApiSends?: boolean;
  clocksConfig?: string;
  imageLinks?: string;
  reachableLinks?: string;
  seed?: string;
  randomSeed?: string;
  delivery: string;
  rateLimit?: string;
  webhookRetryDelays?: string;
  requestLogSize?: string;
  deliveryLogSize?: string;
}

const EXAMPLES = `
Examples:
  # the current form on port 4010, webhooks to a bridge on this machine (its receiver.path);
  # webhook calls carry the Secret Key in Authorization unless --webhook-secret says otherwise
  $ convo-bridge emulator --port 4010 --business-id biz-1 --secret s3cret \\
      --webhook-url http://127.0.0.1:8080/webhooks/platform

  # the earlier form (plain bearer, HTTP error codes, 100/10 requests per minute), seeded
  $ convo-bridge emulator --form earlier --business-id biz-1 --secret s3cret --seed conversations.yaml

  # any free port, messages move pending -> sent -> delivered every 500 ms
  $ convo-bridge emulator --port 0 --business-id biz-1 --secret s3cret --delivery 500

  # a fault-injection run: webhook retries spread over 35 s, large request and delivery logs
  $ convo-bridge emulator --port 0 --business-id biz-1 --secret s3cret --random-seed 7 \\
      --webhook-retry-delays 5000,10000,20000 --request-log-size 500000 --delivery-log-size 100000

It prints the API URL and the inbox page URL, one line on stderr per failed webhook attempt, and
stops on Ctrl+C (SIGINT) or SIGTERM.
Admin API and curl session: docs/emulator.md.
`;

/** One stderr line per failed webhook attempt: what, where, why, and what happens next. */
export function describeWebhookFailure(f: WebhookFailure): string {
  const what = `webhook ${f.deliveryId} ${f.event} (${f.conversationId}) to ${f.url}: attempt ${f.attempt}/${f.maxAttempts} failed: ${f.error}`;
  if (f.retryInMs !== null) {
    const wait = f.retryInMs < 1000 ? `${f.retryInMs} ms` : `${Math.round(f.retryInMs / 100) / 10} s`;
    return `${what}; retrying in ${wait}`;
  }
  return `${what}; gave up (is the bridge running at that URL, with that path and secret? see GET /_emulator/deliveries)`;
}

function parseInteger(value: string, flag: string, min: number, max: number): number {
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new CliError(`${flag} must be a whole number from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return Number(value);
}

/** `--webhook-retry-delays 1000,5000,25000`: the waits before webhook attempts 2, 3 and 4. */
function parseRetryDelays(value: string): number[] {
  const parts = value.split(',').map((part) => part.trim());
  if (parts.length !== 3) {
    throw new CliError(
      `--webhook-retry-delays takes three delays in milliseconds (before attempts 2, 3 and 4), e.g. 1000,5000,25000; got ${JSON.stringify(value)}`,
    );
  }
  return parts.map((part) => parseInteger(part, '--webhook-retry-delays: each delay', 0, 600_000));
}

/** `--image-links https://img.example/,https://cdn.example/i/`: URL prefixes, comma-separated. */
function prefixList(value: string | undefined): string[] {
  if (value === undefined) return [];
  return value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
}

/** Turns the flags into startEmulator options; every mistake is a CliError naming the flag. */
export function emulatorOptionsFromFlags(flags: EmulatorFlags): EmulatorOptions {
  if (flags.webhookSecret !== undefined && flags.webhookUrl === undefined) {
    throw new CliError(
      '--webhook-secret needs --webhook-url (where the webhooks go); without --webhook-secret they carry the --secret key',
    );
  }
  if (flags.handoverWebhookSecret !== undefined && flags.handoverWebhookUrl === undefined) {
    throw new CliError('--handover-webhook-secret needs --handover-webhook-url');
  }
  let delivery: EmulatorOptions['delivery'];
  if (flags.delivery === 'immediate' || flags.delivery === 'manual') delivery = flags.delivery;
  else
    delivery = {
      stepMs: parseInteger(flags.delivery, '--delivery (immediate, manual or milliseconds)', 1, 600_000),
    };
  let rateLimit: EmulatorOptions['rateLimit'];
  if (flags.rateLimit === 'off') rateLimit = false;
  else if (flags.rateLimit !== undefined) {
    const match = /^(\d+)\/(\d+)$/.exec(flags.rateLimit);
    if (!match)
      throw new CliError(
        `--rate-limit must be "off" or "<authenticated>/<unauthenticated>" per minute, e.g. 100/10`,
      );
    rateLimit = { authenticated: Number(match[1]), unauthenticated: Number(match[2]), windowMs: 60_000 };
  }
  return {
    port: parseInteger(flags.port, '--port', 0, 65_535),
    form: flags.form,
    businessId: flags.businessId,
    secret: flags.secret,
    delivery,
    ...(flags.businessName === undefined ? {} : { businessName: flags.businessName }),
    ...(flags.webhookUrl === undefined
      ? {}
      : {
          webhook: {
            url: flags.webhookUrl,
            ...(flags.webhookSecret === undefined ? {} : { secret: flags.webhookSecret }),
          },
        }),
    ...(flags.handoverWebhookUrl === undefined
      ? {}
      : {
          handoverWebhook: {
            url: flags.handoverWebhookUrl,
            ...(flags.handoverWebhookSecret === undefined ? {} : { secret: flags.handoverWebhookSecret }),
          },
        }),
    ...(flags.apiFeature === false ? { apiFeature: false } : {}),
    ...(flags.echoApiSends === true ? { echoApiSends: true } : {}),
    ...(flags.imageLinks === undefined && flags.reachableLinks === undefined
      ? {}
      : { links: { images: prefixList(flags.imageLinks), reachable: prefixList(flags.reachableLinks) } }),
    ...(flags.seed === undefined ? {} : { seedFile: flags.seed }),
    ...(flags.randomSeed === undefined
      ? {}
      : { seed: parseInteger(flags.randomSeed, '--random-seed', 0, 0xffff_ffff) }),
    ...(rateLimit === undefined ? {} : { rateLimit }),
    ...(flags.webhookRetryDelays === undefined
      ? {}
      : { webhookRetryDelaysMs: parseRetryDelays(flags.webhookRetryDelays) }),
    ...(flags.requestLogSize === undefined
      ? {}
      : { requestLogSize: parseInteger(flags.requestLogSize, '--request-log-size', 1, 1_000_000) }),
    ...(flags.deliveryLogSize === undefined
      ? {}
      : { deliveryLogSize: parseInteger(flags.deliveryLogSize, '--delivery-log-size', 1, 1_000_000) }),
  };
}

function waitForStopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve(signal);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

export function registerEmulatorCommand(program: Command, io: CliIo): void {
  program
    .command('emulator')
    .description(
      'Run the platform emulator: the platform API (current or earlier form), webhooks, an admin API and an inbox page',
    )
    .option('--port <n>', 'port on 127.0.0.1 (0 picks a free one)', '4010')
    .addOption(
      new Option('--form <form>', 'interface form').choices(['current', 'earlier']).default('current'),
    )
    .requiredOption('--business-id <id>', 'business id the API accepts')
    .requiredOption('--secret <key>', 'secret key the API accepts (never printed)')
    .option('--business-name <name>', 'business name shown as the sender of API messages')
    .option('--webhook-url <url>', 'where webhook events are sent')
    .option(
      '--webhook-secret <secret>',
      'sent in the Authorization header of every webhook call (default: the --secret key, as the interface says)',
    )
    .option(
      '--handover-webhook-url <url>',
      "the agent's hand-over address, called when the AI hands a conversation to a human",
    )
    .option(
      '--handover-webhook-secret <secret>',
      'Authorization of hand-over calls (default: the --secret key)',
    )
    .option('--no-api-feature', "the business's plan lacks the API feature: every API call gets rc 403")
    .option(
      '--clocks-config <file>',
      "a bridge config: the inbox page shows that bridge's pending timers and window ends (read from its Redis)",
    )
    .option(
      '--echo-api-sends',
      'report messages sent through the API as agent replies (agent.message_out / message.sent), as some platforms do',
    )
    .option(
      '--image-links <prefixes>',
      'link rules of POST /v1/message: URL prefixes (comma-separated, * for all) that are reachable images, sent as separate image messages',
    )
    .option(
      '--reachable-links <prefixes>',
      'URL prefixes of reachable links, kept in the text; with either flag, every other link counts as unreachable and is removed',
    )
    .option('--seed <file>', 'JSON or YAML file of conversations and messages to start with')
    .option('--random-seed <n>', 'seed of the fault-injection RNG, for reproducible faults')
    .option(
      '--delivery <mode>',
      'delivery_status progression: immediate, manual, or milliseconds per step',
      'immediate',
    )
    .option(
      '--rate-limit <spec>',
      'requests per minute as <authenticated>/<unauthenticated>, or off (earlier form: 100/10)',
    )
    .option(
      '--webhook-retry-delays <ms,ms,ms>',
      'waits before webhook attempts 2, 3 and 4 in milliseconds (default 1000,5000,25000)',
    )
    .option(
      '--request-log-size <n>',
      'platform API requests kept for GET /_emulator/requests (default 10000)',
    )
    .option(
      '--delivery-log-size <n>',
      'webhook deliveries kept for GET /_emulator/deliveries (default 10000)',
    )
    .addHelpText('after', EXAMPLES)
    .action((flags: EmulatorFlags) => runEmulator(flags, io));
}

/** `convo-bridge emulator`: starts the emulator, prints where it listens, and stops it on a signal. */
async function runEmulator(flags: EmulatorFlags, io: CliIo): Promise<void> {
  // Loaded only when asked for (BullMQ and ioredis stay out of the CLI's start-up otherwise).
  const clocks =
    flags.clocksConfig === undefined
      ? undefined
      : await (await import('./bridge-clocks-source.js')).bridgeClocksSource(flags.clocksConfig);
  const options: EmulatorOptions = {
    ...emulatorOptionsFromFlags(flags),
    ...(clocks ? { clocks: clocks.clocks } : {}),
    // Failed deliveries were visible only at /_emulator/deliveries (issue 13, item 9).
    onWebhookFailure: (failure) => io.stderr(`${describeWebhookFailure(failure)}\n`),
  };
  let emulator: Awaited<ReturnType<typeof startEmulator>>;
  try {
    const { startEmulator: start } = await import('../emulator/start-emulator.js');
    emulator = await start(options);
  } catch (error) {
    await clocks?.close();
    if (error instanceof EmulatorError) {
      throw new CliError(error.message, {
        exitCode: error.code === 'EMULATOR_LISTEN_FAILED' ? EXIT.unavailable : EXIT.invalidInput,
        code: error.code,
        cause: error,
      });
    }
    throw error;
  }
  const signal = waitForStopSignal();
  io.stdout(
    `convo-bridge emulator (${emulator.form} form) listening on ${emulator.url}\n` +
      `  inbox:     ${emulator.inboxUrl}\n` +
      `  admin API: ${emulator.adminUrl}\n` +
      `  webhooks:  ${options.webhook ? options.webhook.url : '(none; set one with PUT /_emulator/webhook)'}\n` +
      'Press Ctrl+C to stop.\n',
  );
  const received = await signal;
  await emulator.close();
  await clocks?.close();
  io.stdout(`convo-bridge emulator stopped (${received}).\n`);
  process.exitCode = EXIT.ok;
}
