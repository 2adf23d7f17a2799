import { formatDuration } from '../base/duration.js';
import { redactUrl } from '../base/redact-url.js';
import type { LoadedBusiness } from '../config/businesses.js';
import type { BridgeConfig } from '../config/config-schema.js';
import { describeConfigDefaults } from '../config/describe-defaults.js';
import { describeRetention } from '../config/describe-retention.js';
import type { LoadedConfig } from '../config/load-config.js';
import { describeTracing, resolveTracing } from '../observe/tracing-settings.js';
import { describeRedisConfig } from './describe-redis.js';

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** At most this many ids after a default line that only some businesses rely on. */
const SHOWN_IDS = 5;

/**
 * `validate` of a config with businesses: what all share once (receiver, Redis,
 * tracing), two lines per business, the defaults they rely on, and the shared rules. No secrets.
 */
export function summarizeBusinesses(loaded: LoadedConfig, env: NodeJS.ProcessEnv = process.env): string {
  const { businesses } = loaded;
  const first = loaded.config;
  const ownFiles = businesses.filter((b) => b.file !== loaded.file).length;
  const fromDir = ownFiles === 0 ? '' : `, ${ownFiles} from businesses_dir`;
  const count = businesses.length === 1 ? '1 business' : `${businesses.length} businesses`;
  const lines = [`config OK: ${count} (${loaded.file}${fromDir})`];
  lines.push(`  receiver: ${first.receiver.host}:${first.receiver.port}, one webhook path per business`);
  for (const line of describeRedisConfig(first.redis)) lines.push(`  ${line}`);
  lines.push(`  ${describeRetention(first.retention)}`);
  const tracing = resolveTracing(first.tracing, env);
  if (tracing.enabled || first.tracing.enabled === true || first.tracing.endpoint !== null) {
    lines.push(`  tracing: ${describeTracing(tracing)}`);
  }
  for (const business of businesses) lines.push(...describeBusiness(business));
  lines.push(...sharedDefaults(businesses));
  const shared = businesses.find((b) => !(b.overrides ?? []).includes('rules'));
  if (shared && shared.config.rules.length > 0) {
    lines.push(`  shared rules (every business without rules: of its own):`);
    for (const rule of shared.config.rules) lines.push(`  ${describeRule(rule)}`);
  }
  return `${lines.join('\n')}\n`;
}

/** `rule NAME: on KINDS, N actions, stop, cooldown D`, as validate lists rules. */
export function describeRule(rule: BridgeConfig['rules'][number]): string {
  const extras = [
    `on ${rule.on.join(', ')}`,
    plural(rule.actions.length, 'action'),
    ...(rule.stop ? ['stop'] : []),
    ...(rule.cooldownMs !== undefined ? [`cooldown ${formatDuration(rule.cooldownMs)}`] : []),
  ];
  return `  rule ${rule.name}: ${extras.join(', ')}`;
}

/** Two lines: where it is, how it calls the platform; its webhook and its rules. */
export function describeBusiness(business: LoadedBusiness): [string, string] {
  const c = business.config;
  const own = (business.overrides ?? []).includes('rules');
  const rules = `${plural(c.rules.length, 'rule')}, ${own ? 'its own' : 'shared'}`;
  const secrets = plural(c.receiver.secrets.length, 'webhook secret');
  return [
    `  business ${business.id} (${business.file}:${business.line}): ${c.platform.form} form, ${redactUrl(c.platform.baseUrl)}, auth ${c.platform.auth.scheme}`,
    `    webhook ${c.receiver.path}, ${secrets}; ${rules}`,
  ];
}

/** The defaults the businesses rely on, each once, naming the businesses when not all. */
function sharedDefaults(businesses: readonly LoadedBusiness[]): string[] {
  const holders = new Map<string, string[]>();
  for (const business of businesses) {
    for (const line of describeConfigDefaults(business.config)) {
      const ids = holders.get(line) ?? [];
      ids.push(business.id);
      holders.set(line, ids);
    }
  }
  return [...holders].map(([line, ids]) => {
    if (ids.length === businesses.length) return `  default: ${line}`;
    const shown =
      ids.length > SHOWN_IDS
        ? `${ids.slice(0, SHOWN_IDS).join(', ')} and ${ids.length - SHOWN_IDS} more`
        : ids.join(', ');
    return `  default (${shown}): ${line}`;
  });
}
