import { type Command, Option } from 'commander';
import { isHttpUrl } from '../base/is-http-url.js';
import { EmulatorError } from '../emulator/emulator-error.js';
import type { BusinessOptions, EmulatorOptions } from '../emulator/emulator-options.js';
import type { startEmulator } from '../emulator/start-emulator.js';
import type { WebhookFailure } from '../emulator/webhook-dispatcher.js';
import { CliError } from './cli-error.js';
import { type FileBusiness, webhookTargets } from './emulator-businesses-file.js';
import { EXIT } from './exit-codes.js';
import type { CliIo } from './io.js';

interface EmulatorFlags {
  port: string;
  form: 'current' | 'earlier';
  businessId?: string;
  secret?: string;
  /** `--business ID:SECRET[:WEBHOOK_URL]`, repeatable: more businesses. */
  business?: string[];
  /** `--businesses FILE`: more businesses, from a YAML or JSON file. */
  businesses?: string;
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

  # three businesses on one emulator, each with its own credentials and webhook URL
  # (admin API and inbox page: ?business=toko-b; the first, toko-a, is the default)
  $ convo-bridge emulator --business-id toko-a --secret sk-a \
      --webhook-url http://127.0.0.1:8080/webhooks/toko-a \
      --business toko-b:sk-b:http://127.0.0.1:8080/webhooks/toko-b \
      --businesses more-businesses.yaml

  # any free port, messages move pending -> sent -> delivered every 500 ms
  $ convo-bridge emulator --port 0 --business-id biz-1 --secret s3cret --delivery 500

  # a fault-injection run: webhook retries spread over 35 s, large request and delivery logs
  $ convo-bridge emulator --port 0 --business-id biz-1 --secret s3cret --random-seed 7 \\
      --webhook-retry-delays 5000,10000,20000 --request-log-size 500000 --delivery-log-size 100000

It prints the API URL and the inbox page URL, one line on stderr per failed webhook attempt, and
stops on Ctrl+C (SIGINT) or SIGTERM.
Admin API and curl session: docs/emulator.md.
`;

/**
 * One stderr line per failed webhook attempt: what, where, why, and what happens next. With
 * several businesses the line names the business too.
 */
export function describeWebhookFailure(f: WebhookFailure, options: { withBusiness?: boolean } = {}): string {
  const of = options.withBusiness ? ` of business ${f.businessId}` : '';
  const what = `webhook ${f.deliveryId} ${f.event} (${f.conversationId})${of} to ${f.url}: attempt ${f.attempt}/${f.maxAttempts} failed: ${f.error}`;
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

const BUSINESS_FLAG_FORM =
  '--business takes ID:SECRET or ID:SECRET:WEBHOOK_URL, e.g. --business "toko-b:$TOKO_B_SECRET:http://127.0.0.1:8080/webhooks/toko-b"';

/**
 * `--business toko-b:sk-b[:http://...]`: a business's id, Secret Key and webhook URL (its webhooks
 * then carry the Secret Key). Neither the id nor the secret may hold a `:` (a --businesses file
 * may). No message repeats the value: it holds a secret.
 */
export function parseBusinessFlag(value: string): BusinessOptions {
  const colon = value.indexOf(':');
  const id = colon === -1 ? '' : value.slice(0, colon).trim();
  const rest = colon === -1 ? '' : value.slice(colon + 1);
  const next = rest.indexOf(':');
  const secret = next === -1 ? rest : rest.slice(0, next);
  const webhookUrl = next === -1 ? undefined : rest.slice(next + 1);
  if (id === '') throw new CliError(`${BUSINESS_FLAG_FORM}; one has no ID before its first ':'`);
  if (secret === '') throw new CliError(`${BUSINESS_FLAG_FORM}; --business ${id} has no SECRET`);
  if (webhookUrl !== undefined && !isHttpUrl(webhookUrl)) {
    throw new CliError(
      `--business ${id}: what follows the secret must be an http(s) webhook URL, e.g. ${id}:SECRET:http://127.0.0.1:8080/webhooks/${id} (a secret with ':' in it goes in a --businesses file)`,
    );
  }
  return { businessId: id, secret, ...(webhookUrl === undefined ? {} : { webhook: { url: webhookUrl } }) };
}

/** Flags that configure the business of --business-id, with the flag each is. */
const FIRST_BUSINESS_FLAGS = [
  ['secret', '--secret'],
  ['businessName', '--business-name'],
  ['webhookUrl', '--webhook-url'],
  ['webhookSecret', '--webhook-secret'],
  ['handoverWebhookUrl', '--handover-webhook-url'],
  ['handoverWebhookSecret', '--handover-webhook-secret'],
  ['seed', '--seed'],
] as const;

/**
 * The business of --business-id and the flags that configure it, as a table of none or one: read
 * here once, so that the options carry every business in one list.
 */
function flagsBusiness(flags: EmulatorFlags): BusinessOptions[] {
  const { businessId, secret } = flags;
  if (businessId === undefined) {
    const stray: string[] = FIRST_BUSINESS_FLAGS.filter(([key]) => flags[key] !== undefined).map(
      ([, flag]) => flag,
    );
    if (flags.apiFeature === false) stray.push('--no-api-feature');
    if (stray.length > 0) {
      throw new CliError(
        `${stray.join(', ')} configure${stray.length === 1 ? 's' : ''} the business of --business-id, which is not given: add --business-id and --secret, or use --business ID:SECRET:WEBHOOK_URL or a --businesses file`,
      );
    }
    return [];
  }
  if (secret === undefined) throw new CliError("--business-id needs --secret (the business's Secret Key)");
  return [
    {
      businessId,
      secret,
      ...(flags.businessName === undefined ? {} : { businessName: flags.businessName }),
      ...webhookTargets(
        flags.webhookUrl,
        flags.webhookSecret,
        flags.handoverWebhookUrl,
        flags.handoverWebhookSecret,
      ),
      ...(flags.apiFeature === false ? { apiFeature: false } : {}),
      ...(flags.seed === undefined ? {} : { seedFile: flags.seed }),
    },
  ];
}

/**
 * The businesses after the one of --business-id: each --business in order, then the file's. Two
 * with one id, or one Secret Key (the first business's among them), are refused here with the
 * flags or file places that give them.
 */
function moreBusinesses(
  flags: EmulatorFlags,
  own: readonly BusinessOptions[],
  fromFile: readonly FileBusiness[],
): BusinessOptions[] {
  const labelled: { options: BusinessOptions; label: string }[] = [
    ...(flags.business ?? []).map((value) => {
      const options = parseBusinessFlag(value);
      return { options, label: `--business ${options.businessId}` };
    }),
    ...fromFile.map((b) => ({ options: b.options, label: `${b.where} (${b.options.businessId})` })),
  ];
  if (own.length + labelled.length === 0) {
    throw new CliError(
      'no business: give --business-id and --secret, or --business ID:SECRET, or --businesses FILE',
    );
  }
  // The first business's Secret Key is named by its flag and its business, never by its value.
  const ids = new Map<string, string>(own.map((b) => [b.businessId.trim(), '--business-id']));
  const secrets = new Map<string, string>(own.map((b) => [b.secret, `--secret (${b.businessId})`]));
  for (const { options, label } of labelled) {
    const id = options.businessId.trim();
    const sameId = ids.get(id);
    if (sameId !== undefined) {
      throw new CliError(
        `${label}: business id ${JSON.stringify(id)} is also given by ${sameId}: each business needs its own id`,
      );
    }
    const sameSecret = secrets.get(options.secret);
    if (sameSecret !== undefined) {
      throw new CliError(
        `${label}: its secret is also the secret of ${sameSecret}: give each business its own Secret Key (the earlier form's plain bearer names a business by its key alone)`,
      );
    }
    ids.set(id, label);
    secrets.set(options.secret, label);
  }
  return labelled.map((b) => b.options);
}

/**
 * Turns the flags (and the businesses of a --businesses file, read beforehand) into startEmulator
 * options; every mistake is a CliError naming the flag. The business of --business-id goes in the
 * options' top-level business fields (their names are a business's own), so that the emulator's
 * messages about it name the fields as always; the others in `businesses`.
 */
export function emulatorOptionsFromFlags(
  flags: EmulatorFlags,
  fromFile: readonly FileBusiness[] = [],
): EmulatorOptions {
  const own = flagsBusiness(flags);
  const more = moreBusinesses(flags, own, fromFile);
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
    ...own[0],
    ...(more.length === 0 ? {} : { businesses: more }),
    delivery,
    ...(flags.echoApiSends === true ? { echoApiSends: true } : {}),
    ...(flags.imageLinks === undefined && flags.reachableLinks === undefined
      ? {}
      : { links: { images: prefixList(flags.imageLinks), reachable: prefixList(flags.reachableLinks) } }),
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
    .option(
      '--business-id <id>',
      'business id the API accepts (the first business; required unless --business or --businesses names one)',
    )
    .option('--secret <key>', 'secret key the API accepts (never printed; required with --business-id)')
    .option(
      '--business <id:secret[:webhook-url]>',
      'one more business with its own id, Secret Key and webhook URL (repeatable; its webhooks carry its Secret Key)',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option(
      '--businesses <file>',
      'YAML or JSON file listing more businesses (id, secret, name, webhook_url, webhook_secret, ...; docs/emulator.md)',
    )
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
    .action((flags: EmulatorFlags, command: Command) => runEmulator(flags, io, command));
}

/**
 * --business-id and --secret were required options; they still are unless --business or
 * --businesses names the businesses, and the message stays the one commander gave.
 */
function requireFirstBusiness(flags: EmulatorFlags, command: Command): void {
  const named = (flags.business ?? []).length > 0 || flags.businesses !== undefined;
  let missing: string | undefined;
  if (flags.businessId === undefined) {
    if (flags.secret !== undefined || !named) missing = '--business-id <id>';
  } else if (flags.secret === undefined) missing = '--secret <key>';
  if (missing === undefined) return;
  command.error(
    `error: required option '${missing}' not specified${named || missing === '--secret <key>' ? '' : ' (or name the businesses with --business ID:SECRET or --businesses FILE)'}`,
    { exitCode: EXIT.invalidInput, code: 'commander.missingMandatoryOptionValue' },
  );
}

/**
 * The banner's lines about the businesses: where the webhooks of one go, or a line for each of
 * several (never a secret).
 */
function describeBusinesses(businesses: readonly BusinessOptions[]): string {
  const [only] = businesses;
  if (businesses.length === 1 && only !== undefined) {
    return `  webhooks:  ${only.webhook ? only.webhook.url : '(none; set one with PUT /_emulator/webhook)'}\n`;
  }
  const width = Math.max(...businesses.map((b) => b.businessId.length));
  const lines = businesses.map(
    (b) =>
      `    ${b.businessId.padEnd(width)}  webhooks: ${b.webhook ? b.webhook.url : `(none; PUT /_emulator/webhook?business=${b.businessId})`}`,
  );
  return `  businesses (${businesses.length}; the admin API and the inbox take ?business=ID, default ${businesses[0]?.businessId}):\n${lines.join('\n')}\n`;
}

/** `convo-bridge emulator`: starts the emulator, prints where it listens, and stops it on a signal. */
async function runEmulator(flags: EmulatorFlags, io: CliIo, command: Command): Promise<void> {
  requireFirstBusiness(flags, command);
  const fromFile =
    flags.businesses === undefined
      ? []
      : await (await import('./emulator-businesses-file.js')).loadBusinessesFile(flags.businesses);
  const base = emulatorOptionsFromFlags(flags, fromFile);
  const businesses = [...flagsBusiness(flags), ...(base.businesses ?? [])];
  // Loaded only when asked for (BullMQ and ioredis stay out of the CLI's start-up otherwise).
  const clocks =
    flags.clocksConfig === undefined
      ? undefined
      : await (await import('./bridge-clocks-source.js')).bridgeClocksSource(flags.clocksConfig);
  const options: EmulatorOptions = {
    ...base,
    ...(clocks ? { clocks: clocks.clocks } : {}),
    // Failed deliveries are said on stderr too: at /_emulator/deliveries alone they went unseen.
    onWebhookFailure: (failure) =>
      io.stderr(`${describeWebhookFailure(failure, { withBusiness: businesses.length > 1 })}\n`),
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
      describeBusinesses(businesses) +
      'Press Ctrl+C to stop.\n',
  );
  const received = await signal;
  await emulator.close();
  await clocks?.close();
  io.stdout(`convo-bridge emulator stopped (${received}).\n`);
  process.exitCode = EXIT.ok;
}
