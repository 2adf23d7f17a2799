import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/run-cli.js';
import { ConfigError, formatConfigIssue } from '../../../src/config/config-error.js';
import { FORWARD_FIELDS } from '../../../src/config/config-schema.js';
import { parseConfigText } from '../../../src/config/load-config.js';
import { ConversationEventSchema } from '../../../src/events/conversation-event.js';

/** Issue 27: record.redact's kinds of personal data, and destinations.NAME.fields. */
const HEAD =
  'platform:\n  base_url: https://api.example.com\n  auth: { business_id: b, secret: s }\nreceiver:\n  secrets: [ w ]\n';

const load = (text: string) => parseConfigText(`${HEAD}${text}`, { fileName: 'p.yaml', env: {} });

function issuesOf(text: string): string[] {
  try {
    load(text);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return error.issues.map(formatConfigIssue);
  }
  throw new Error('the text loaded, but it should not have');
}

describe('record.redact', () => {
  const none = { texts: false, phones: false, emails: false, cards: false, nationalIds: false };

  it.each([
    ['unset: nothing redacted (as before issue 27)', '', none],
    ['phones alone, as before', 'record:\n  redact: { phones: true }\n', { ...none, phones: true }],
    [
      'personal: every kind of personal data',
      'record:\n  redact: { personal: true }\n',
      { ...none, phones: true, emails: true, cards: true, nationalIds: true },
    ],
    [
      'personal with one kind turned off',
      'record:\n  redact: { personal: true, cards: false }\n',
      { ...none, phones: true, emails: true, cards: false, nationalIds: true },
    ],
    [
      'kinds one by one, with texts',
      'record:\n  redact: { texts: true, emails: true, national_ids: true }\n',
      { ...none, texts: true, emails: true, nationalIds: true },
    ],
  ])('%s', (_name, text, expected) => {
    expect(load(text).config.record.redact).toEqual(expected);
  });

  it.each([
    [
      'a misspelt kind',
      'record:\n  redact: { national_id: true }\n',
      'p.yaml:7:13: record.redact.national_id: unknown key "national_id": did you mean "national_ids"?',
    ],
    [
      'a kind that is not true or false',
      'record:\n  redact: { emails: yes please }\n',
      'p.yaml:7:21: record.redact.emails: expected true or false, got "yes please"',
    ],
  ])('%s is an error that says where and what', (_name, text, expected) => {
    expect(issuesOf(text)).toEqual([expected]);
  });
});

describe('destinations.NAME.fields', () => {
  it('offers exactly the fields of the canonical event', () => {
    expect([...FORWARD_FIELDS].sort()).toEqual(Object.keys(ConversationEventSchema.shape).sort());
  });

  it('unset: the whole event (null); set: the named fields, in the event order, each once', () => {
    const { config } = load(
      'destinations:\n  crm: { url: "https://crm.example.com/a" }\n  audit:\n    url: "https://audit.example.com/b"\n    fields: [ occurredAt, conversationId, kind, conversationId ]\n',
    );
    expect(config.destinations.crm?.fields).toBeNull();
    expect(config.destinations.audit?.fields).toEqual(['kind', 'conversationId', 'occurredAt']);
  });

  it.each([
    [
      'a snake_case name',
      '[ conversation_id ]',
      'p.yaml:9:15: destinations.audit.fields.0: "conversation_id" is not a field of a forwarded event; did you mean "conversationId"?',
    ],
    [
      'a near miss',
      '[ kind, txt ]',
      'p.yaml:9:21: destinations.audit.fields.1: "txt" is not a field of a forwarded event; did you mean "text"?',
    ],
    [
      'a name far from any field',
      '[ customer_phone ]',
      `p.yaml:9:15: destinations.audit.fields.0: "customer_phone" is not a field of a forwarded event; the names are ${FORWARD_FIELDS.join(', ')}`,
    ],
    [
      'a nested path (only top-level fields)',
      '[ channel.id ]',
      'p.yaml:9:15: destinations.audit.fields.0: "channel.id" is not a field of a forwarded event: fields are named whole; "channel" carries it',
    ],
    [
      'an empty list',
      '[]',
      'p.yaml:9:13: destinations.audit.fields: name at least one field, or leave fields out to send the whole event',
    ],
  ])('%s is an error that lists what is allowed', (_name, list, expected) => {
    expect(
      issuesOf(`destinations:\n  audit:\n    url: "https://audit.example.com/b"\n    fields: ${list}\n`),
    ).toEqual([expected]);
  });

  it('validate says what each destination carries', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'privacy-settings-'));
    const file = join(dir, 'bridge.yaml');
    writeFileSync(
      file,
      `${HEAD}destinations:\n  crm: { url: "https://crm.example.com/a" }\n  audit: { url: "https://audit.example.com/b", fields: [ kind, conversationId ] }\n  support: { url: "https://s.example.com/c", fields: [ conversationId, text ] }\n`,
    );
    let stdout = '';
    const code = await runCli(['validate', file], { stdout: (t) => (stdout += t), stderr: () => {} });
    rmSync(dir, { recursive: true, force: true });
    expect(code).toBe(0);
    expect(stdout).toContain(
      '  destinations: crm (the whole event, texts and names included); audit (event fields kind, conversationId; no texts or names); support (event fields conversationId, text; customer data: text)\n',
    );
  });
});
