// The public API of convo-bridge. Named exports only (no `export *`), so this file is the list.
export type { Attachment, ConversationEvent, EventKind } from './events/conversation-event.js';
export { ConversationEventSchema, EVENT_KINDS } from './events/conversation-event.js';
export { ConvoBridgeError } from './shared/errors.js';
export { formatWib, parseWib } from './shared/wib-time.js';
