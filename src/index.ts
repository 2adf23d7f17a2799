// The public API of convo-bridge. Named exports only (no `export *`), so this file is the list.
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
export { ConvoBridgeError } from './shared/errors.js';
export { formatWib, parseWib } from './shared/wib-time.js';
