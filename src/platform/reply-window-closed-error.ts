import { ConvoBridgeError } from '../base/errors.js';

/**
 * Refusal to send a free-form reply after the channel's reply window closed (WhatsApp Business
 * and Instagram: 24 hours after the customer's last message; webhook-payloads.md §4). The worker
 * decides the window; the client refuses to break it, without calling the platform.
 */
export class ReplyWindowClosedError extends ConvoBridgeError {
  declare readonly code: 'REPLY_WINDOW_CLOSED';
  readonly conversationId: string;
  readonly windowClosesAt: Date;

  constructor(conversationId: string, windowClosesAt: Date, now: Date) {
    super(
      `reply to conversation ${conversationId} refused: its reply window closed at ` +
        `${windowClosesAt.toISOString()} (now ${now.toISOString()}); free-form messages are no longer ` +
        'allowed on this channel, so wait for the customer to write again or use a template message',
      { code: 'REPLY_WINDOW_CLOSED' },
    );
    this.conversationId = conversationId;
    this.windowClosesAt = windowClosesAt;
  }
}
