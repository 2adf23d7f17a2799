// The public API of convo-bridge. Named exports only (no `export *`), so this file is the list.

export type { ChannelType } from './emulator/channels.js';
export { CHANNEL_TYPES } from './emulator/channels.js';
export type { ConversationStatus } from './emulator/conversation-status.js';
export { CONVERSATION_STATUSES } from './emulator/conversation-status.js';
export type {
  ApiRequestRecord,
  ConversationDetail,
  ConversationView,
  CustomerMessageInput,
  EmulatorAdmin,
  MessageView,
} from './emulator/emulator-admin.js';
export { EmulatorError } from './emulator/emulator-error.js';
export type { EmulatorOptions } from './emulator/emulator-options.js';
export type { ActiveFault, FaultSpecInput } from './emulator/faults.js';
export type { SeedData } from './emulator/seed-data.js';
export { loadSeedFile } from './emulator/seed-data.js';
export type { EmulatorHandle } from './emulator/start-emulator.js';
export { startEmulator } from './emulator/start-emulator.js';
export type { DeliveryLogEntry, DeliveryRecord } from './emulator/webhook-dispatcher.js';
export type { WebhookPayload } from './emulator/webhook-payload.js';
export type { Attachment, ConversationEvent, EventKind } from './events/conversation-event.js';
export { ConversationEventSchema, EVENT_KINDS } from './events/conversation-event.js';
export { ConvoBridgeError } from './shared/errors.js';
export { formatWib, parseWib } from './shared/wib-time.js';
