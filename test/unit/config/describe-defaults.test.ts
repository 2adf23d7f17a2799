import { describe, expect, it } from 'vitest';
import { describeConfigDefaults } from '../../../src/config/describe-defaults.js';
import { parseConfigText } from '../../../src/config/load-config.js';
import { unmappedChannelAdvice } from '../../../src/rules/default-channel-kind.js';

const configOf = (text: string) => parseConfigText(text, { fileName: 'inline.yaml', env: {} }).config;

// Issue 12: `validate` and start-up say which defaults a config relies on.
describe('describeConfigDefaults', () => {
  it('says every default a wrong guess would hurt, for a config that sets almost nothing', () => {
    const lines = describeConfigDefaults(
      configOf(
        'platform:\n  base_url: https://api.example.com\n  form: earlier\n  auth: { secret: s3cret }\nreceiver: {}\n',
      ),
    );
    expect(lines[0]).toBe(
      "platform.auth.scheme not set: bearer-secret (Authorization: Bearer <secret>), the earlier form's scheme; business_id is not needed",
    );
    expect(lines[1]).toMatch(/^receiver\.secrets not set: webhooks must carry the platform Secret Key/);
    expect(lines[2]).toMatch(
      /^channels: a channel no entry matches takes the kind of its engine: waba -> whatsapp_api/,
    );
    expect(lines.slice(3)).toEqual([
      expect.stringMatching(
        /^channels: WhatsApp channels of engine "wa" are unmapped: .* kind: whatsapp_api \}/,
      ),
      expect.stringMatching(
        /^channels: WhatsApp channels of engine "whatsapp" are unmapped: .* kind: whatsapp_qr \}/,
      ),
    ]);
    expect(lines.join('\n')).not.toContain('s3cret');
  });

  it('says nothing of what the config states; an engine-wide WhatsApp entry maps every such channel', () => {
    const lines = describeConfigDefaults(
      configOf(`platform:
  base_url: https://api.example.com
  auth: { scheme: headers, business_id: b, secret: s }
receiver: { secrets: [ w ] }
channels:
  - { match: { engine: whatsapp }, kind: whatsapp_api }
`),
    );
    expect(lines).toEqual([expect.stringMatching(/^channels: a channel no entry matches/)]);
  });

  it('names the channel ids mapped one by one', () => {
    const lines = describeConfigDefaults(
      configOf(`platform:
  base_url: https://api.example.com
  auth: { scheme: headers, business_id: b, secret: s }
receiver: { secrets: [ w ] }
channels:
  - { match: { engine: whatsapp, channel_id: ch_waba_1 }, kind: whatsapp_api }
`),
    );
    expect(lines[1]).toMatch(
      /^channels: WhatsApp channels of engine "wa" \(apart from "ch_waba_1"\) are unmapped/,
    );
  });
});

describe('unmappedChannelAdvice', () => {
  it('gives the exact YAML line for the other reading', () => {
    expect(
      unmappedChannelAdvice(
        { id: 'ch_9', name: null, engine: 'whatsapp', rawEngine: 'whatsapp' },
        { kind: 'whatsapp_api', assumption: 'the engine "whatsapp" does not tell ...' },
      ),
    ).toBe(
      'channel "ch_9" (engine "whatsapp") has no channels: entry; the engine "whatsapp" does not tell .... If it is a QR-linked number (no reply window), add under channels: - { match: { engine: whatsapp, channel_id: "ch_9" }, kind: whatsapp_qr } (or kind: whatsapp_api to confirm the default and silence this warning)',
    );
  });
});
