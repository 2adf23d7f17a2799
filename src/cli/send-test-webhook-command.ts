import { randomBytes } from 'node:crypto';
import { type Command, Option } from 'commander';
import got, { RequestError } from 'got';
import {
  buildTestWebhook,
  TEST_EVENTS,
  type TestEvent,
  type WebhookForm,
} from '../demo/test-webhook-payload.js';
import { CliError } from './cli-error.js';
import { EXIT } from './exit-codes.js';
import type { CliIo } from './io.js';

const EXAMPLES = `
Examples:
  # the dashboard's test ping to a bridge on this machine
  $ convo-bridge send-test-webhook --url http://127.0.0.1:8080/webhooks/platform --secret "$WEBHOOK_SECRET"

  # a complaint in conversation conv-42, which must exist on the platform for the bridge's actions
  # to succeed (config/demo.yaml escalates it and forwards it to the CRM)
  $ convo-bridge send-test-webhook --url http://127.0.0.1:8080/webhooks/platform --secret "$WEBHOOK_SECRET" \\
      --event complaint --conversation conv-42

  # the AI saying it does not know, with the earlier form's event names
  $ convo-bridge send-test-webhook --url http://127.0.0.1:8080/webhooks/platform --secret "$WEBHOOK_SECRET" \\
      --event ai-unsure --form earlier

The secret goes in the Authorization header, as the platform sends it. Prints the HTTP status and
the body. {"success":true} means the event was stored (queued), not that the bridge acted on it:
without --conversation the id is made up, unknown to the platform, and the job dead-letters. Exit codes: 0 the receiver answered {"success":true}, 1 it answered anything else (wrong
secret, bad URL path...), 2 it could not be reached.`;

interface Flags {
  url: string;
  secret: string;
  event: TestEvent;
  conversation?: string;
  form: WebhookForm;
  timeout: string;
}

/** Connection-level failures: nothing answered at that address. */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'EPIPE',
]);

function parseUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new CliError(
      `--url must be the receiver's webhook URL, e.g. http://127.0.0.1:8080/webhooks/platform, not ${JSON.stringify(text)}`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CliError(`--url must start with http:// or https://, not ${url.protocol}//`);
  }
  return url;
}

function isSuccess(body: string): boolean {
  try {
    const parsed: unknown = JSON.parse(body);
    return (
      typeof parsed === 'object' && parsed !== null && (parsed as { success?: unknown }).success === true
    );
  } catch {
    return false;
  }
}

/**
 * Where webhooks go, read from the receiver's 404 answer: a bridge of one business names its path;
 * a bridge of several names none (a stranger would learn which businesses it serves), so the hint
 * says how the config gives them and where to read them.
 */
function wrongPathHint(body: string): string {
  let error = '';
  try {
    const parsed: unknown = JSON.parse(body);
    if (typeof parsed === 'object' && parsed !== null) {
      const value = (parsed as { error?: unknown }).error;
      if (typeof value === 'string') error = value;
    }
  } catch {
    // Not the bridge's JSON: fall through to the general hint.
  }
  const single = /webhooks are POSTed to (\S+)$/.exec(error);
  if (single) return `this receiver takes webhooks at ${single[1]} (its receiver.path)`;
  if (error.includes('no business of this bridge')) {
    return 'this bridge serves several businesses, each at its own receiver.path (/webhooks/<id> unless its entry sets one); `convo-bridge validate --config FILE` lists them (`webhook PATH` under each business)';
  }
  return "a bridge listens on receiver.path, /webhooks/platform by default, or with businesses: on each business's path, /webhooks/<id> by default; `convo-bridge validate --config FILE` lists them";
}

export function registerSendTestWebhookCommand(program: Command, io: CliIo): void {
  program
    .command('send-test-webhook')
    .description('post a realistic platform webhook to a running receiver and show its answer')
    .requiredOption('--url <url>', "the receiver's webhook URL (path included)")
    .requiredOption('--secret <secret>', 'the webhook secret (sent as Authorization; never printed)')
    .addOption(new Option('--event <event>', 'what to send').choices(TEST_EVENTS).default('test'))
    .option('--conversation <id>', 'conversation id (default: a new conv-test-...)')
    .addOption(
      new Option('--form <form>', 'event names of this interface form')
        .choices(['current', 'earlier'])
        .default('current'),
    )
    .option('--timeout <ms>', 'give up after this many milliseconds', '10000')
    .addHelpText('after', EXAMPLES)
    .action(async (flags: Flags) => {
      const url = parseUrl(flags.url);
      if (flags.secret.trim() === '') throw new CliError('--secret must not be empty');
      const timeoutMs = Number(flags.timeout);
      if (!/^\d+$/.test(flags.timeout) || timeoutMs < 1 || timeoutMs > 120_000) {
        throw new CliError(
          `--timeout must be milliseconds from 1 to 120000, not ${JSON.stringify(flags.timeout)}`,
        );
      }
      const conversationId = flags.conversation ?? `conv-test-${randomBytes(4).toString('hex')}`;
      const payload = buildTestWebhook(flags.event, { conversationId, form: flags.form, nowMs: Date.now() });
      io.stdout(`POST ${url.href} (${flags.event}, ${flags.form} form, conversation ${conversationId})\n`);
      let status: number;
      let body: string;
      try {
        const response = await got.post(url, {
          body: JSON.stringify(payload),
          headers: {
            'content-type': 'application/json',
            authorization: flags.secret,
            'user-agent': 'convo-bridge',
          },
          throwHttpErrors: false,
          retry: { limit: 0 },
          timeout: { request: timeoutMs },
          followRedirect: false,
        });
        status = response.statusCode;
        body = response.body;
      } catch (error) {
        const code = error instanceof RequestError ? error.code : undefined;
        if (code !== undefined && UNREACHABLE.has(code)) {
          throw new CliError(
            `the receiver at ${url.origin} cannot be reached (${code}): is the bridge running (convo-bridge start) and is the URL right?`,
            { exitCode: EXIT.unavailable, code: 'RECEIVER_UNREACHABLE', cause: error },
          );
        }
        throw new CliError(`the request to ${url.origin} failed: ${code ?? String(error)}`, {
          exitCode: EXIT.unavailable,
          code: 'RECEIVER_UNREACHABLE',
          cause: error,
        });
      }
      io.stdout(`HTTP ${status}\n${body}\n`);
      if (!isSuccess(body)) {
        const hint =
          status === 401
            ? ' (the secret does not match: use the value of receiver.secrets / WEBHOOK_SECRET)'
            : status === 404
              ? ` (wrong path: ${wrongPathHint(body)})`
              : '';
        throw new CliError(`the receiver did not answer {"success":true}${hint}`, {
          exitCode: EXIT.invalidInput,
          code: 'WEBHOOK_REJECTED',
        });
      }
      if (flags.event === 'test') {
        io.stdout('acknowledged: the test ping is answered and not queued\n');
      } else {
        // 200 means stored, not done: the worker acts later and may still fail.
        io.stdout(
          `queued: the receiver stored the event; the worker acts on it in the background (this tool does not wait). Check the conversation on the platform, the bridge's log, or \`convo-bridge dlq list\`\n`,
        );
        if (flags.conversation === undefined) {
          io.stderr(
            `warning: conversation ${conversationId} was made up, so the platform does not know it: its notes, need-human and replies will fail ("conversation not found") and the job will land in the dead letters. Pass --conversation with the id of a conversation that exists on the platform (with the emulator, create one first: POST /_emulator/conversations)\n`,
          );
        }
      }
      process.exitCode = EXIT.ok;
    });
}
