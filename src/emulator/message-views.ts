import { formatWib } from '../base/wib-time.js';
import type { StoredMessage } from './emulator-state.js';

/**
 * History list items as each form writes them (messaging-service-interface.md, "Message, current
 * form" and "Message, earlier form"). Pure.
 */
export interface CurrentFormMessage {
  id: number;
  message_id: string;
  conversation_id: string;
  sender: string;
  sender_name: string;
  message: string;
  caption: string;
  message_type: string;
  mime_type: string;
  sent_at: string;
  delivery_status: string;
  reply_to_message_id?: string;
}

export interface EarlierFormMessage {
  id: number;
  message_id: string;
  conversation_id: string;
  sender: string;
  message: string;
  message_type: string;
  mime_type: string;
  sent_at: string;
  /** A JSON document as a string; the emulator puts what the earlier item has no field for in it. */
  metadata: string;
  lock_by_human: 0 | 1;
  is_note: 0 | 1;
}

export function toCurrentFormMessage(message: StoredMessage): CurrentFormMessage {
  const item: CurrentFormMessage = {
    id: message.id,
    message_id: message.messageId,
    conversation_id: message.conversationId,
    sender: message.sender,
    sender_name: message.senderName,
    message: message.body,
    caption: message.caption,
    message_type: message.type,
    mime_type: message.mimeType,
    sent_at: formatWib(new Date(message.sentAtMs)),
    delivery_status: message.deliveryStatus,
  };
  // Spec: present only when the message is a reply in the channel.
  if (message.replyToMessageId !== null) item.reply_to_message_id = message.replyToMessageId;
  return item;
}

export function toEarlierFormMessage(message: StoredMessage, lockByHuman: boolean): EarlierFormMessage {
  return {
    id: message.id,
    message_id: message.messageId,
    conversation_id: message.conversationId,
    sender: message.sender,
    message: message.body,
    message_type: message.type,
    mime_type: message.mimeType,
    sent_at: formatWib(new Date(message.sentAtMs)),
    metadata: JSON.stringify({
      sender_name: message.senderName,
      caption: message.caption,
      delivery_status: message.deliveryStatus,
    }),
    lock_by_human: lockByHuman ? 1 : 0,
    is_note: message.isNote ? 1 : 0,
  };
}
