import type { Command } from 'commander';
import { ConsoleLinkError, consoleUrl, issueLink, LINK_ROLES, type LinkRole } from '../api/console-link.js';
import { revokeLink } from '../api/link-revocations.js';
import { DURATION_HINT, parseDuration } from '../base/duration.js';
import { CliError } from './cli-error.js';
import { EXIT } from './exit-codes.js';
import type { CliIo } from './io.js';
import {
  addRedisTargetOptions,
  REDIS_TARGET_HELP,
  type RedisTarget,
  type RedisTargetFlags,
  resolveRedisTarget,
  runWithRedis,
} from './redis-target.js';

interface LinkFlags extends RedisTargetFlags {
  role?: string;
  for: string;
  json?: boolean;
  baseUrl?: string;
}

/** Where the bridge serves its admin surface, as its config says (admin.listen, else the receiver). */
function baseUrlOf(target: RedisTarget, flag: string | undefined): string {
  if (flag !== undefined) return flag;
  const config = target.config;
  if (config === undefined) {
    throw new CliError(
      'say where the console is served: --base-url https://ops.example.com (or pass --config)',
      {
        exitCode: EXIT.invalidInput,
      },
    );
  }
  const where = config.admin.listen ?? { host: config.receiver.host, port: config.receiver.port };
  const host = where.host.includes(':') ? `[${where.host}]` : where.host;
  return `http://${host}:${where.port}`;
}

function issue(
  target: RedisTarget,
  flags: LinkFlags,
): { url: string; token: string; id: string; expiresAt: string } {
  const secret = target.config?.admin.linkSecret ?? null;
  if (secret === null) {
    throw new CliError(
      'console links need admin.link_secret in the config (at least 32 characters, e.g. ${CONSOLE_LINK_SECRET}): set it, restart the bridge, and pass --config',
      { exitCode: EXIT.invalidInput },
    );
  }
  const role = flags.role as LinkRole | undefined;
  if (role === undefined || !LINK_ROLES.includes(role)) {
    throw new CliError(`--role takes ${LINK_ROLES.join(' or ')}, not ${JSON.stringify(flags.role ?? '')}`, {
      exitCode: EXIT.invalidInput,
    });
  }
  const forMs = parseDuration(flags.for);
  if (forMs === undefined)
    throw new CliError(`--for takes ${DURATION_HINT}, not "${flags.for}"`, { exitCode: EXIT.invalidInput });
  try {
    const { token, grant } = issueLink(secret, { business: target.business, role, forMs });
    return {
      url: consoleUrl(baseUrlOf(target, flags.baseUrl), target.business, token),
      token,
      id: grant.id,
      expiresAt: new Date(grant.expiresAt).toISOString(),
    };
  } catch (error) {
    if (error instanceof ConsoleLinkError)
      throw new CliError(error.message, { exitCode: EXIT.invalidInput, cause: error });
    throw error;
  }
}

/** `convo-bridge console link --business ID --role viewer|operator --for 7d`, and `console link revoke ID`. */
export function registerConsoleCommand(program: Command, io: CliIo): void {
  const consoleCommand = program
    .command('console')
    .description("hand a business's console and operator API to someone: signed, expiring, revocable links");
  addRedisTargetOptions(
    consoleCommand
      .command('link')
      .argument('[revoke]', '`revoke ID`: the link of that id stops working at once')
      .argument('[id]', 'the id of the link to revoke (as `console link` printed it)')
      .description(
        'print a console link for one business and role (its token works as a Bearer token on /api/v1)',
      )
      .option(
        '--role <role>',
        `${LINK_ROLES.join(' or ')}: a viewer reads; an operator also retries and acts on timers`,
      )
      .option('--for <duration>', 'how long the link works (up to 366d)', '7d')
      .option(
        '--base-url <url>',
        "where people reach the bridge's admin surface (default: admin.listen, else the receiver)",
      )
      .option('--json', 'print {"url", "token", "id", "expiresAt"}'),
  )
    .addHelpText(
      'after',
      `
${REDIS_TARGET_HELP}

The link opens /console/businesses/ID with the token in the URL's fragment (#token=...), which a
browser never sends to a server. The same token is a Bearer token on the operator API. Changing
admin.link_secret revokes every link at once. docs/api.md has the details.

Examples:
  convo-bridge console link --business toko-a --role viewer --for 7d --config config/bridge.yaml
  convo-bridge console link --business toko-a --role operator --for 30d --json --config config/bridge.yaml
  convo-bridge console link revoke 3f2a9c0d1e4b5a69 --config config/bridge.yaml`,
    )
    .action(async (verb: string | undefined, id: string | undefined, flags: LinkFlags) => {
      const target = await resolveRedisTarget(flags);
      if (verb === undefined) {
        const link = issue(target, flags);
        io.stdout(
          flags.json
            ? `${JSON.stringify(link, null, 2)}\n`
            : `${link.url}\n(link ${link.id}, ${flags.role} of ${target.business}, until ${link.expiresAt}; revoke: convo-bridge console link revoke ${link.id})\n`,
        );
        return;
      }
      if (verb !== 'revoke' || id === undefined || !/^[0-9a-f]{16}$/.test(id)) {
        throw new CliError(
          'write `console link revoke ID` with the 16-character id the link was printed with',
          {
            exitCode: EXIT.invalidInput,
          },
        );
      }
      await runWithRedis(target, async (redis, layout) => {
        await revokeLink(redis, layout.global, id);
      });
      io.stdout(`revoked console link ${id}: its token is refused from now on\n`);
    });
}
