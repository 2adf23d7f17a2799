export const DELIVERY_STATUSES = ['pending', 'sent', 'delivered', 'read', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * One message of a conversation's history, the same shape for both interface forms. Fields a
 * form does not carry are null (the current form has no `is_note`; the earlier form has no
 * `delivery_status`). Spec: messaging-service-interface.md, "Message, current form" and
 * "Message, earlier form".
 */
export interface PlatformMessage {
  /** Ascending with time; the history cursor (`last_id`). */
  id: number;
  messageId: string;
  conversationId: string;
  /** `user` (customer), `agent` (AI, human or API), `system`, or whatever else was sent (lower-cased). */
  sender: 'user' | 'agent' | 'system' | (string & {});
  senderName: string | null;
  /** The `message` field: the text, or the file URL of a media message; '' when absent. */
  text: string;
  /** Media caption; '' when there is none. */
  caption: string;
  messageType: string | null;
  mimeType: string | null;
  /** `sent_at` (WIB wall-clock time) as an instant. */
  sentAt: Date;
  deliveryStatus: DeliveryStatus | null;
  replyToMessageId: string | null;
  /** Earlier form `is_note`; null in the current form, where notes carry no marker. */
  isNote: boolean | null;
  /** Earlier form `lock_by_human`. */
  lockByHuman: boolean | null;
  /** Earlier form `metadata` (a JSON document in a string), parsed; null when absent or unparseable. */
  metadata: Record<string, unknown> | null;
}
