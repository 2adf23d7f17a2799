// The public API of convo-bridge. Named exports only (no `export *`), so this file is the list.

export { formatDuration, parseDuration, parseSize } from './base/duration.js';
export { ConvoBridgeError } from './base/errors.js';
export { formatWib, parseWib } from './base/wib-time.js';
export type { LoadedBusiness } from './config/businesses.js';
export { BUSINESS_ID_PATTERN, DEFAULT_BUSINESS_ID } from './config/businesses.js';
export type { ConfigIssue } from './config/config-error.js';
export { ConfigError, formatConfigIssue } from './config/config-error.js';
export { configJsonSchema } from './config/config-json-schema.js';
export type { BridgeConfig } from './config/config-schema.js';
export type { Env, MissingVariable } from './config/interpolate-env.js';
export type { LoadedConfig, LoadOptions } from './config/load-config.js';
export { loadConfig, parseConfigText } from './config/load-config.js';
export { DEFAULT_CONFIG_PATH, resolveConfigPath } from './config/resolve-config-path.js';
export type { ConfigWatcher, WatchConfigOptions, WatchLogger } from './config/watch-config.js';
export { watchConfig } from './config/watch-config.js';
export type { CrmDelivery, CrmSink } from './demo/crm-sink.js';
export { startCrmSink } from './demo/crm-sink.js';
export type { DemoErrorCode } from './demo/demo-error.js';
export { DemoError } from './demo/demo-error.js';
export type { DemoResult, RunDemoOptions } from './demo/run-demo.js';
export { runDemo } from './demo/run-demo.js';
export type { TestEvent, TestWebhookOptions, WebhookForm } from './demo/test-webhook-payload.js';
export { buildTestWebhook, TEST_EVENTS } from './demo/test-webhook-payload.js';
export type {
  ApiRequestRecord,
  ConversationDetail,
  ConversationView,
  MessageView,
} from './emulator/admin-views.js';
export type { ChannelType } from './emulator/channels.js';
export { CHANNEL_TYPES } from './emulator/channels.js';
export type { ConversationStatus } from './emulator/conversation-status.js';
export { CONVERSATION_STATUSES } from './emulator/conversation-status.js';
export type { CustomerMessageInput, EmulatorAdmin } from './emulator/emulator-admin.js';
export type { BusinessListing, EmulatorBusinesses } from './emulator/emulator-businesses.js';
export { EmulatorError } from './emulator/emulator-error.js';
export type { BusinessOptions, EmulatorOptions } from './emulator/emulator-options.js';
export type { ActiveFault, FaultSpecInput } from './emulator/faults.js';
export type { SeedData } from './emulator/seed-data.js';
export { loadSeedFile } from './emulator/seed-data.js';
export type { EmulatorHandle } from './emulator/start-emulator.js';
export { startEmulator } from './emulator/start-emulator.js';
export type { DeliveryLogEntry, DeliveryRecord } from './emulator/webhook-dispatcher.js';
export type { WebhookPayload } from './emulator/webhook-payload.js';
export type { Attachment, ConversationEvent, EventKind } from './events/conversation-event.js';
export { ConversationEventSchema, EVENT_KINDS } from './events/conversation-event.js';
export type { GetMessagesInput, MediaInput, SendMessageInput } from './platform/build-requests.js';
export { CURRENT_FORM_MIME_TYPES, MEDIA_TYPES } from './platform/build-requests.js';
export type {
  AfterResponseInfo,
  BeforeRequestInfo,
  PlatformClientHooks,
  PlatformClientOptions,
} from './platform/client-options.js';
export { PlatformClientOptionsError } from './platform/client-options.js';
export type {
  IterateMessagesOptions,
  PlatformClient,
  SendMessageOptions,
} from './platform/create-platform-client.js';
export { createPlatformClient } from './platform/create-platform-client.js';
export type { PlatformOperation } from './platform/operations.js';
export type { HistoryPage } from './platform/parse-responses.js';
export type { PlatformErrorCode } from './platform/platform-error.js';
export { isPlatformError, PLATFORM_ERROR_CODES, PlatformError } from './platform/platform-error.js';
export type { DeliveryStatus, PlatformMessage } from './platform/platform-message.js';
export { ReplyWindowClosedError } from './platform/reply-window-closed-error.js';
export type { Receiver } from './receive/create-receiver.js';
export { createReceiver } from './receive/create-receiver.js';
export { DEFAULT_EVENT_JOB_OPTIONS } from './receive/event-producer.js';
export type { ListeningReceiver } from './receive/http/receiver-servers.js';
export type {
  NormalizeProblem,
  NormalizeResult,
  UnderstandFailure,
} from './receive/normalize/normalize-event.js';
export { normalizeEvent } from './receive/normalize/normalize-event.js';
export type { QuarantineEntry, QuarantineReason, QuarantineStore } from './receive/quarantine-store.js';
export {
  getQuarantined,
  listQuarantine,
  purgeQuarantine,
  quarantineBody,
} from './receive/quarantine-store.js';
export { RECEIVER_DEFAULTS } from './receive/receiver-defaults.js';
export type { ReceiverErrorCode } from './receive/receiver-errors.js';
export { ReceiverError } from './receive/receiver-errors.js';
export type { ReceiverBusiness, ReceiverOptions } from './receive/receiver-options.js';
export type { ReplayDeps, ReplayResult } from './receive/replay-quarantined.js';
export { replayQuarantined } from './receive/replay-quarantined.js';
export { createSecretVerifier } from './receive/verify-secret.js';
export type { WebhookOutcome } from './receive/webhook-reply.js';
export type { BacktestReport, EventPlanSummary } from './record/backtest.js';
export { backtest } from './record/backtest.js';
export type { GoldenMismatch } from './record/golden-plans.js';
export { compareGolden } from './record/golden-plans.js';
export type { ActionSummary, FactsJson, PlanSummary, RecordedEvent } from './record/recorded-event.js';
export { RecordedEventSchema } from './record/recorded-event.js';
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
export type { ReplyWindowSource, ReplyWindowState, ResolvedChannelKind } from './rules/reply-window.js';
export { channelKind, replyWindow, resolveChannelKind } from './rules/reply-window.js';
export type {
  ChannelConfig,
  ChannelKind,
  ReplyWindowConfig,
  RulesSettings,
} from './rules/rules-settings-schema.js';
export { CHANNEL_KINDS } from './rules/rules-settings-schema.js';
export type { CheckFailure } from './rules-test/check-plan.js';
export type { RuleTestFile } from './rules-test/rules-test-schema.js';
export { RuleTestFileSchema, rulesTestJsonSchema } from './rules-test/rules-test-schema.js';
export type { CaseResult, FileResult } from './rules-test/run-rule-tests.js';
export { runRuleTestFile } from './rules-test/run-rule-tests.js';
export type { StoryReader, StoryReaderOptions } from './story/story-reader.js';
export { createStoryReader, StoryQueryError } from './story/story-reader.js';
export type {
  ConversationSummary,
  SearchPage,
  Stats,
  StatsHour,
  Story,
  StoryEntry,
  StoryQuery,
} from './story/story-schema.js';
export {
  ConversationSummarySchema,
  SearchPageSchema,
  StatsSchema,
  StoryEntrySchema,
  StoryQuerySchema,
  StorySchema,
} from './story/story-schema.js';
