// The public API of convo-bridge. Named exports only (no `export *`), so this file is the list.

export type { ConfigIssue } from './config/config-error.js';
export { ConfigError, formatConfigIssue } from './config/config-error.js';
export { configJsonSchema } from './config/config-json-schema.js';
export type { BridgeConfig, ChannelConfig, ChannelKind, ReplyWindowConfig } from './config/config-schema.js';
export { CHANNEL_KINDS } from './config/config-schema.js';
export { formatDuration, parseDuration, parseSize } from './config/duration.js';
export type { Env, MissingVariable } from './config/interpolate-env.js';
export type { LoadedConfig, LoadOptions } from './config/load-config.js';
export { loadConfig, parseConfigText } from './config/load-config.js';
export { DEFAULT_CONFIG_PATH, resolveConfigPath } from './config/resolve-config-path.js';
export type { ConfigWatcher, WatchConfigOptions, WatchLogger } from './config/watch-config.js';
export { watchConfig } from './config/watch-config.js';
export type { Attachment, ConversationEvent, EventKind } from './events/conversation-event.js';
export { ConversationEventSchema, EVENT_KINDS } from './events/conversation-event.js';
export type { CompiledRules } from './rules/compile-rules.js';
export { compileRules } from './rules/compile-rules.js';
export { evaluateRules } from './rules/evaluate-rules.js';
export { formatPlan } from './rules/format-plan.js';
export type {
  ConversationFacts,
  Plan,
  PlannedAction,
  ReplyMessage,
  ReplyWindowPlan,
  RuleOutcome,
} from './rules/plan.js';
export type { ReplyWindowSource, ReplyWindowState } from './rules/reply-window.js';
export { channelKind, replyWindow } from './rules/reply-window.js';
export { ConvoBridgeError } from './shared/errors.js';
export { formatWib, parseWib } from './shared/wib-time.js';
