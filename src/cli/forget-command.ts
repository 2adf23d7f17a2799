import type { Command } from 'commander';
import { Cluster } from 'ioredis';
import { type Customer, CustomerQueryError, parseCustomer } from '../base/customer-match.js';
import { DURATION_HINT, formatDuration, parseDuration } from '../base/duration.js';
import { checkEveryNode, ForgetUnavailableError } from '../privacy/check-every-node.js';
import { FORGET_STORES } from '../privacy/forget-conversation.js';
import {
  type ForgetOutput,
  type ForgetRequest,
  ForgetStoppedError,
  forgetRequest,
} from '../privacy/forget-request.js';
import type { KeyLayout } from '../queue/key-layout.js';
import { layoutRecordKey, readStoredLayout } from '../queue/layout-record.js';
import type { RedisClient } from '../redis/redis-client.js';
import { CliError } from './cli-error.js';
import { EXIT } from './exit-codes.js';
import type { CliIo } from './io.js';
import {
  addRedisTargetOptions,
  describeWhere,
  REDIS_TARGET_HELP,
  type RedisTarget,
  type RedisTargetFlags,
  resolveRedisTarget,
  runWithRedis,
} from './redis-target.js';

interface ForgetFlags extends RedisTargetFlags {
  conversation: string[];
  customer: string[];
  dryRun?: boolean;
  wait: string;
  json?: boolean;
}

const collect = (value: string, previous: string[]) => [...previous, value];

/** `convo-bridge forget --conversation ID | --customer PHONE|EMAIL`: erases what is kept of them. */
export function registerForgetCommand(program: Command, io: CliIo): void {
  addRedisTargetOptions(
    program
      .command('forget')
      .description(
        "erase everything the bridge holds about conversations or a customer (data subjects' requests)",
      )
      .option('--conversation <id>', 'a conversation to erase (repeatable)', collect, [])
      .option(
        '--customer <phone-or-email>',
        'erase every conversation whose stored texts or names hold this phone number or e-mail address (repeatable)',
        collect,
        [],
      )
      .option('--dry-run', 'say what would be erased, erase nothing')
      .option(
        '--wait <duration>',
        "how long to wait for the conversations' queued or running events to finish",
        '60s',
      )
      .option('--json', 'print the result as JSON'),
  )
    .addHelpText(
      'after',
      `
${REDIS_TARGET_HELP}

Erases, on every shard and cluster node: conversation state and order, pending timers (they never
fire afterwards), the data of its jobs in every state, queue event-log entries naming it, kept run
state, dead letters, quarantined bodies, recorded events and shadow rules differences. Events of
the conversation that are queued or running are finished first (up to --wait). Idempotent. Exit 2
when a Redis node cannot be reached (nothing is erased) or its events do not finish in time.
docs/privacy.md lists every store.

Examples:
  convo-bridge forget --conversation 6281234567890 --config config/bridge.yaml
  convo-bridge forget --customer "+62 812-3456-7890" --dry-run --config config/bridge.yaml
  convo-bridge forget --customer budi@example.com --business toko-a --json`,
    )
    .action(async (flags: ForgetFlags) => {
      const request = parseRequest(flags);
      const target = await resolveRedisTarget(flags);
      await runWithRedis(target, async (redis, layout) => {
        const output = await refusedAsCliError(async () => {
          // Before the layout record is read: a node down is the first thing to report.
          await checkEveryNode(redis);
          await checkLayoutKnown(redis, target);
          return runForget(redis, layout, request);
        }, target);
        io.stdout(flags.json ? `${JSON.stringify(output, null, 2)}\n` : formatOutput(output, target));
      });
    });
}

function parseRequest(flags: ForgetFlags): ForgetRequest {
  if (flags.conversation.length === 0 && flags.customer.length === 0) {
    throw new CliError(
      'say what to forget: --conversation ID (repeatable) or --customer PHONE-OR-EMAIL; add --dry-run to see first',
    );
  }
  const blank = flags.conversation.find((id) => id.trim() === '');
  if (blank !== undefined) throw new CliError('--conversation needs a conversation id, not an empty string');
  const waitMs = parseDuration(flags.wait);
  if (waitMs === undefined) throw new CliError(`--wait takes ${DURATION_HINT}, not "${flags.wait}"`);
  let customers: Customer[];
  try {
    customers = flags.customer.map(parseCustomer);
  } catch (error) {
    if (error instanceof CustomerQueryError) throw new CliError(error.message, { cause: error });
    throw error;
  }
  return {
    conversations: [...new Set(flags.conversation)],
    customers,
    dryRun: flags.dryRun === true,
    waitMs,
  };
}

/**
 * On a cluster without a config, the layout comes from the bridge's record of it; without one, the
 * prefix is wrong or the bridge never ran there, and guessing a layout would search the wrong keys.
 */
async function checkLayoutKnown(redis: RedisClient, target: RedisTarget): Promise<void> {
  if (!(redis instanceof Cluster) || target.config !== undefined) return;
  if ((await readStoredLayout(redis, target.prefix)) !== null) return;
  throw new CliError(
    `no bridge data under prefix "${target.prefix}" on the cluster at ${target.address} (no ${layoutRecordKey(target.prefix, true)}): check --prefix, or pass --config with the bridge's config so that its redis.shards is used`,
  );
}

/** A node forget could not reach (privacy/check-every-node.ts) is exit code 2, with where it looked. */
async function refusedAsCliError<T>(run: () => Promise<T>, target: RedisTarget): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof ForgetUnavailableError)) throw error;
    throw new CliError(`${error.message} (Redis at ${target.address})`, {
      exitCode: EXIT.unavailable,
      code: error.code,
      cause: error,
    });
  }
}

/** The privacy layer's run of a request (privacy/forget-request.ts), its stops as exit code 2. */
async function runForget(
  redis: RedisClient,
  layout: KeyLayout,
  request: ForgetRequest,
): Promise<ForgetOutput> {
  try {
    return await forgetRequest(redis, layout, request);
  } catch (error) {
    if (!(error instanceof ForgetStoppedError)) throw error;
    throw new CliError(error.message, { exitCode: EXIT.unavailable, code: error.code, cause: error });
  }
}

function formatOutput(output: ForgetOutput, target: RedisTarget): string {
  const verb = output.dryRun ? 'would erase' : 'erased';
  const lines: string[] = [];
  for (const { customer, matches } of output.customers) {
    lines.push(
      `customer ${JSON.stringify(customer)}: held by ${matches.conversations.length} conversation(s)${matches.conversations.length > 0 ? `: ${matches.conversations.join(', ')}` : ''}${matches.quarantineIds.length > 0 ? `, and ${matches.quarantineIds.length} quarantined body(ies) naming no conversation (${verb})` : ''}`,
    );
  }
  const where = `prefix "${target.prefix}"${target.naming.tag === '' ? '' : `, business ${target.business}`} at ${describeWhere(target)}`;
  for (const result of output.conversations) {
    const total = FORGET_STORES.reduce((sum, store) => sum + result.erased[store], 0);
    lines.push(
      `conversation ${JSON.stringify(result.conversationId)} (${where}): ${verb} ${total} entr${total === 1 ? 'y' : 'ies'}`,
    );
    for (const store of FORGET_STORES) lines.push(`  ${store.padEnd(20)} ${result.erased[store]}`);
    if (result.waitedMs >= 1000)
      lines.push(`  (waited ${formatDuration(result.waitedMs)} for its queued events to finish)`);
    if (output.dryRun && result.pending > 0) {
      lines.push(
        `  ${result.pending} event(s) or timer(s) still queued or running: forget will wait for them first`,
      );
    }
  }
  if (output.conversations.length === 0) lines.push(nothingElse(output, verb));
  return `${lines.join('\n')}\n`;
}

/**
 * The closing line when no conversation holds the customer: the quarantined bodies erased are then
 * everything the bridge held about them, which the record of the request must say, not "nothing".
 */
function nothingElse(output: ForgetOutput, verb: string): string {
  const bodies = output.quarantineWithoutConversation;
  if (bodies === 0)
    return 'nothing to forget: no stored conversation or quarantined body holds that customer';
  return `no stored conversation holds that customer: the ${bodies} quarantined body(ies) above ${output.dryRun ? 'are' : 'were'} all the bridge held about them (${verb})`;
}
