/**
 * The channels a conversation can be on (messaging-service-interface.md, "What the service does" 1)
 * and the per-channel rules the emulator enforces.
 */
export const CHANNEL_TYPES = [
  'whatsapp_qr',
  'whatsapp_api',
  'telegram',
  'instagram',
  'facebook',
  'intercom',
  'slack',
  'socialchat',
  'webchat',
] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];

export type ApiForm = 'current' | 'earlier';

interface ChannelInfo {
  /** Default display name of a channel of this type. */
  readonly label: string;
  /** `message.channel.engine` in webhooks (webhook-payloads.md §2 lists the engines seen). */
  readonly engine: Readonly<Record<ApiForm, string>>;
  /** Free-form replies are allowed only within REPLY_WINDOW_MS of the customer's last message. */
  readonly replyWindow: boolean;
}

/** 24 hours: the free-form reply window of the WhatsApp business API, Instagram (spec, "Limits") and Messenger. */
export const REPLY_WINDOW_MS = 24 * 60 * 60 * 1000;

const CHANNELS: Readonly<Record<ChannelType, ChannelInfo>> = {
  whatsapp_qr: { label: 'WhatsApp', engine: { current: 'wa', earlier: 'whatsapp' }, replyWindow: false },
  whatsapp_api: {
    label: 'WhatsApp Business API',
    engine: { current: 'waba', earlier: 'whatsapp' },
    replyWindow: true,
  },
  telegram: { label: 'Telegram', engine: { current: 'telegram', earlier: 'telegram' }, replyWindow: false },
  instagram: {
    label: 'Instagram',
    engine: { current: 'instagram', earlier: 'instagram' },
    replyWindow: true,
  },
  // Messenger has the 24-hour window too (the bridge and the emulator agree). The
  // interface's "Limits" row names WhatsApp business API and Instagram without saying the list is
  // complete; webhook-payloads.md §4 says Messenger has the same window (Meta's rule for every
  // Messenger Platform page). The emulator marks such a late send `failed`, as the platform would
  // see it from Meta, and the bridge holds it (`messenger` is in `reply_window.applies_to`).
  facebook: { label: 'Facebook', engine: { current: 'facebook', earlier: 'facebook' }, replyWindow: true },
  intercom: { label: 'Intercom', engine: { current: 'intercom', earlier: 'intercom' }, replyWindow: false },
  slack: { label: 'Slack', engine: { current: 'slack', earlier: 'slack' }, replyWindow: false },
  socialchat: {
    label: 'SocialChat',
    engine: { current: 'socialchat', earlier: 'socialchat' },
    replyWindow: false,
  },
  webchat: { label: 'Web chat', engine: { current: 'webchat', earlier: 'webchat' }, replyWindow: false },
};

export function channelLabel(type: ChannelType): string {
  return CHANNELS[type].label;
}

/** True when free-form replies on this channel type need an open reply window. */
export function hasReplyWindow(type: ChannelType): boolean {
  return CHANNELS[type].replyWindow;
}

export function channelEngine(type: ChannelType, form: ApiForm): string {
  return CHANNELS[type].engine[form];
}

/**
 * True when a free-form message sent at `nowMs` falls outside the channel's reply window: 24 hours
 * or more after the customer's last message, or no customer message at all.
 */
export function isOutsideReplyWindow(
  type: ChannelType,
  lastCustomerMessageAtMs: number | null,
  nowMs: number,
): boolean {
  if (!CHANNELS[type].replyWindow) return false;
  if (lastCustomerMessageAtMs === null) return true;
  // Spec, Behaviours 4: "a free-form message is allowed only within 24 hours of the customer's
  // last message". Whether the 24th hour's last instant is inside is not said; the strict reading
  // (conformance finding) closes the window at exactly 24 hours, the instant at which the
  // client's `windowClosesAt` guard already refuses.
  return nowMs - lastCustomerMessageAtMs >= REPLY_WINDOW_MS;
}
