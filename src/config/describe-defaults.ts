import { defaultChannelKind } from '../rules/default-channel-kind.js';
import { engineMatches } from '../rules/reply-window.js';
import type { BridgeConfig } from './config-schema.js';

/** The WhatsApp engine names whose kind the bridge can only assume (see default-channel-kind.ts). */
const ASSUMED_ENGINES = ['wa', 'whatsapp'] as const;

/**
 * Lines saying which defaults a config relies on where a wrong guess would hurt:
 * credentials, the webhook secret, and the channel kinds behind the reply window. `validate`
 * prints them; `start`/`serve`/`work` log them at start-up. No secrets.
 */
export function describeConfigDefaults(config: BridgeConfig): string[] {
  const lines: string[] = [];
  if (config.platform.auth.schemeDefaulted) {
    lines.push(
      config.platform.form === 'earlier'
        ? "platform.auth.scheme not set: bearer-secret (Authorization: Bearer <secret>), the earlier form's scheme; business_id is not needed"
        : "platform.auth.scheme not set: headers (Business + Secret), the current form's separate headers",
    );
  }
  if (config.receiver.secretsDefaulted) {
    lines.push(
      'receiver.secrets not set: webhooks must carry the platform Secret Key (platform.auth.secret), as the interface says webhook calls do; list secrets to accept others or to rotate',
    );
  }
  const unmapped = unmappedWhatsAppEngines(config);
  lines.push(
    'channels: a channel no entry matches takes the kind of its engine: waba -> whatsapp_api, instagram/ig -> instagram, facebook/fb/messenger -> messenger, telegram, slack, intercom, socialchat and webchat -> their own kind (no window)',
  );
  for (const engine of unmapped) {
    const assumed = defaultChannelKind(engine);
    if (assumed === null) continue;
    const other = assumed.kind === 'whatsapp_qr' ? 'whatsapp_api' : 'whatsapp_qr';
    const mapped = mappedChannelIds(config, engine);
    const except = mapped.length === 0 ? '' : ` (apart from ${mapped.map((id) => `"${id}"`).join(', ')})`;
    lines.push(
      `channels: WhatsApp channels of engine "${engine}"${except} are unmapped: ${assumed.assumption}; add one line per channel id, e.g. - { match: { engine: ${engine}, channel_id: "CHANNEL_ID" }, kind: ${other} } (the first event of each such channel logs its exact line)`,
    );
  }
  return lines;
}

/**
 * The assumed WhatsApp engines that no engine-wide `channels:` entry covers. An entry with a
 * `channel_id` or `channel_name` covers only that channel, so the engine stays listed.
 */
export function unmappedWhatsAppEngines(config: Pick<BridgeConfig, 'channels'>): string[] {
  return ASSUMED_ENGINES.filter(
    (engine) =>
      !config.channels.some(
        (entry) =>
          entry.match.channelId === undefined &&
          entry.match.channelName === undefined &&
          entry.match.engine !== undefined &&
          engineMatches(entry.match.engine, { id: null, name: null, engine: 'whatsapp', rawEngine: engine }),
      ),
  );
}

/** Channel ids that `channels:` entries map one by one for an engine. */
function mappedChannelIds(config: Pick<BridgeConfig, 'channels'>, engine: string): string[] {
  return config.channels.flatMap((entry) =>
    entry.match.channelId !== undefined &&
    (entry.match.engine === undefined ||
      engineMatches(entry.match.engine, { id: null, name: null, engine: 'whatsapp', rawEngine: engine }))
      ? [entry.match.channelId]
      : [],
  );
}
