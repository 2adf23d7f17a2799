import type { ActionConfig } from '../rules/rule-schema.js';
import type { ConfigPath } from './config-document.js';
import { type BridgeConfig, REDELIVERY_HORIZON_MS } from './config-schema.js';
import { formatKeptFor } from './describe-retention.js';
import type { SchemaProblem } from './describe-zod-issues.js';
import { tagWarnings } from './tag-warnings.js';

/**
 * What a valid config sets up that can never happen: sets left empty that silence a
 * rule without a word; conditions on tags that no rule sets (tag-warnings.ts); and
 * keys under their old names, and retention too short for what relies on it. `validate`
 * prints them as warnings, with file:line:column; the bridge starts anyway (an empty set may be on
 * purpose while a config is being written).
 */
export function configWarnings(config: BridgeConfig): SchemaProblem[] {
  const warnings: SchemaProblem[] = [...retentionWarnings(config)];
  const noWindow = config.replyWindow.appliesTo.length === 0;
  const neverOpen = config.businessHours !== null && Object.keys(config.businessHours.weekly).length === 0;
  config.rules.forEach((rule, i) => {
    if (noWindow && rule.on.includes('window_closing')) {
      warnings.push({
        path: ['rules', i, 'on'],
        atKey: false,
        message: `rules.${i} (${rule.name}): on: window_closing never fires: reply_window.applies_to is [], so no channel has a reply window; list the channel kinds it applies to, or remove the rule`,
      });
    }
    if (neverOpen) {
      for (const path of businessClockTimers(rule.actions, ['rules', i, 'then'])) {
        warnings.push({
          path,
          atKey: false,
          message: `${path.join('.')}: clock: business never comes due: business_hours.weekly is {} (never open); add opening hours, or use clock: wall`,
        });
      }
    }
  });
  warnings.push(...tagWarnings(config), ...adminWarnings(config));
  return warnings;
}

/** Hosts that mean "every interface" to Node's `listen`. */
const ALL_INTERFACES = new Set(['0.0.0.0', '::', '[::]', '0:0:0:0:0:0:0:0', '*']);

/**
 * The admin surface on the webhook port of a receiver that listens on every interface: whoever can
 * send webhooks can try the admin password. `admin.listen` on its own address keeps it off the
 * internet; one written on 0.0.0.0 is taken as meant (a container behind a port mapping).
 */
function adminWarnings(config: BridgeConfig): SchemaProblem[] {
  const { admin, receiver } = config;
  if (admin.password === undefined || admin.listen !== null || !ALL_INTERFACES.has(receiver.host)) return [];
  return [
    {
      path: ['admin', 'password'],
      atKey: true,
      message: `admin.listen is unset, so the admin surface (/admin/queues) shares the webhook port, and receiver.host ${receiver.host} listens on all interfaces: anyone who can reach the webhooks can try the admin password; set admin.listen: 127.0.0.1:9090 (or another private address) to serve it apart (docs/production.md, "The admin surface")`,
    },
  ];
}

/** The `clock:` paths of timers counting business hours among `actions` (and timers within them). */
function businessClockTimers(actions: readonly ActionConfig[], path: ConfigPath): ConfigPath[] {
  return actions.flatMap((action, j) => {
    if (action.type !== 'after') return [];
    const own: ConfigPath[] = action.clock === 'business' ? [[...path, j, 'clock']] : [];
    return [...own, ...businessClockTimers(action.actions, [...path, j, 'then'])];
  });
}

/** Old key names, and retention shorter than the redeliveries or the marks that rely on it. */
function retentionWarnings(config: BridgeConfig): SchemaProblem[] {
  const warnings: SchemaProblem[] = config.oldKeys.map((old) => ({
    path: [...old.path],
    atKey: true,
    message: `${old.path.join('.')} is an old name: write it as ${old.replacement} (read as that for now; both at once are refused)`,
  }));
  const { dedupeMs, conversationsMs } = config.retention;
  if (dedupeMs < REDELIVERY_HORIZON_MS) {
    const written = config.oldKeys.find((old) => old.replacement === 'retention.dedupe');
    warnings.push({
      path: written ? [...written.path] : ['retention', 'dedupe'],
      atKey: false,
      message: `${written ? written.path.join('.') : 'retention.dedupe'} (${formatKeptFor(dedupeMs)}) is shorter than the platform's redeliveries (up to ${formatKeptFor(REDELIVERY_HORIZON_MS)}): a duplicate that arrives later is taken as new, and its rules may act twice; keep it at ${formatKeptFor(REDELIVERY_HORIZON_MS)} or more`,
    });
  }
  const windowMs = config.replyWindow.hours * 3_600_000;
  if (config.replyWindow.appliesTo.length > 0 && conversationsMs < windowMs) {
    warnings.push({
      path: ['retention', 'conversations'],
      atKey: false,
      message: `retention.conversations (${formatKeptFor(conversationsMs)}) is shorter than the reply window (reply_window.hours: ${config.replyWindow.hours}): a conversation forgets its last customer message while the window may still be open, and the bridge asks the platform's history again for it`,
    });
  }
  config.rules.forEach((rule, i) => {
    if (rule.cooldownMs !== undefined && rule.cooldownMs > conversationsMs) {
      warnings.push(
        forgottenMark(
          ['rules', i, 'cooldown'],
          `rules.${i} (${rule.name}): cooldown`,
          rule.cooldownMs,
          conversationsMs,
        ),
      );
    }
    for (const [path, ms] of oncePerConversation(rule.actions, ['rules', i, 'then'])) {
      if (ms > conversationsMs) {
        warnings.push(forgottenMark(path, `${path.join('.')}`, ms, conversationsMs));
      }
    }
  });
  return warnings;
}

function forgottenMark(path: ConfigPath, what: string, ms: number, conversationsMs: number): SchemaProblem {
  return {
    path,
    atKey: false,
    message: `${what} (${formatKeptFor(ms)}) is longer than retention.conversations (${formatKeptFor(conversationsMs)}): a conversation quiet that long forgets the mark, and the action may run again sooner; raise retention.conversations`,
  };
}

/** The `once_per_conversation:` paths and durations of replies among `actions` (and timers within them). */
function oncePerConversation(actions: readonly ActionConfig[], path: ConfigPath): [ConfigPath, number][] {
  return actions.flatMap((action, j): [ConfigPath, number][] => {
    if (action.type === 'after') return oncePerConversation(action.actions, [...path, j, 'then']);
    if (action.type === 'reply' && action.reply.oncePerConversationMs !== undefined) {
      return [[[...path, j, 'reply', 'once_per_conversation'], action.reply.oncePerConversationMs]];
    }
    return [];
  });
}
