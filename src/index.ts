// The public API of convo-bridge. Named exports only (no `export *`), so this file is the list.
export type { Attachment, ConversationEvent, EventKind } from './events/conversation-event.js';
export { ConversationEventSchema, EVENT_KINDS } from './events/conversation-event.js';
export type { ListeningReceiver, Receiver } from './receive/create-receiver.js';
export { createReceiver } from './receive/create-receiver.js';
export { DEFAULT_EVENT_JOB_OPTIONS } from './receive/event-producer.js';
export type { NormalizeProblem, NormalizeResult, UnderstandFailure } from './receive/normalize-event.js';
export { normalizeEvent } from './receive/normalize-event.js';
export type { QuarantineEntry, QuarantineReason, QuarantineStore } from './receive/quarantine-store.js';
export {
  getQuarantined,
  listQuarantine,
  purgeQuarantine,
  quarantineBody,
} from './receive/quarantine-store.js';
export type { ReceiverErrorCode } from './receive/receiver-errors.js';
export { ReceiverError } from './receive/receiver-errors.js';
export type { ReceiverOptions } from './receive/receiver-options.js';
export { RECEIVER_DEFAULTS } from './receive/receiver-options.js';
export type { ReplayDeps, ReplayResult } from './receive/replay-quarantined.js';
export { replayQuarantined } from './receive/replay-quarantined.js';
export { createSecretVerifier } from './receive/verify-secret.js';
export type { WebhookOutcome } from './receive/webhook-reply.js';
export { ConvoBridgeError } from './shared/errors.js';
export { formatWib, parseWib } from './shared/wib-time.js';
