import { describe, expect, it } from 'vitest';
import { ConfigError, formatConfigIssue } from '../../../src/config/config-error.js';
import { parseRetentionSettings } from '../../../src/config/config-schema.js';
import { describeRetention } from '../../../src/config/describe-retention.js';
import { parseConfigText } from '../../../src/config/load-config.js';
import { bridgeJobOptions, eventStreamOptions } from '../../../src/queue/job-options.js';
import { receiverOptionsFromConfig } from '../../../src/receive/receiver-options.js';
import { storeTtls } from '../../../src/worker/store-ttls.js';

/**
 * The `retention:` section (issue 27, point 2): its defaults, every way it can be written wrong
 * (one row each, with the message the user sees), the old key names it replaces, and what the
 * receiver and worker are handed from it.
 */

const HEAD =
  'platform:\n  base_url: https://api.example.com\n  auth: { business_id: b, secret: s }\nreceiver:\n  secrets: [ w ]\n';

function load(text: string) {
  return parseConfigText(`${HEAD}${text}`, { fileName: 'r.yaml', env: {} });
}

function problemsOf(text: string): string[] {
  try {
    load(text);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return error.issues.map(formatConfigIssue);
  }
  throw new Error('the config loaded, but it should not have');
}

const warningsOf = (text: string) => load(text).warnings.map(formatConfigIssue);

describe('retention: defaults', () => {
  it('are the schema defaults, in ms, for a config without the section and for parseRetentionSettings()', () => {
    const expected = {
      doneEventsMs: 0,
      failedEventsMs: 7 * 86_400_000,
      deadLettersMs: 30 * 86_400_000,
      quarantineMs: 30 * 86_400_000,
      conversationsMs: 30 * 86_400_000,
      storiesMs: 30 * 86_400_000,
      recordedEventsMs: 7 * 86_400_000,
      dedupeMs: 72 * 3_600_000,
      eventStreamMaxLen: 100,
    };
    expect(load('').config.retention).toEqual(expected);
    expect(parseRetentionSettings()).toEqual(expected);
    expect(load('').warnings).toEqual([]);
  });

  it('hand the receiver and the worker their settings: done jobs removed, failed by age, expiries', () => {
    const { config } = load('');
    expect(bridgeJobOptions(8, config.retention)).toEqual({
      attempts: 8,
      backoff: { type: 'custom' },
      removeOnComplete: { count: 0 },
      removeOnFail: { age: 7 * 86_400, count: 10_000 },
    });
    expect(eventStreamOptions(config.retention)).toEqual({ streams: { events: { maxLen: 100 } } });
    expect(receiverOptionsFromConfig(config)).toMatchObject({
      dedupeWindowSeconds: 72 * 3_600,
      quarantineMaxAgeSeconds: 30 * 86_400,
      eventStreamMaxLen: 100,
      jobOptions: { removeOnComplete: { count: 0 } },
    });
    expect(storeTtls(config.retention)).toEqual({
      conversationSeconds: 30 * 86_400,
      deadLetterSeconds: 30 * 86_400,
      deadLetterRunSeconds: 30 * 86_400 + 3_600,
      unfinishedRunSeconds: 8 * 86_400,
    });
  });

  it('a duration for done_events keeps done jobs that long, at most 10,000', () => {
    const { config } = load('retention: { done_events: 1h, failed_events: 2d, event_stream: 0 }\n');
    expect(bridgeJobOptions(3, config.retention)).toMatchObject({
      removeOnComplete: { age: 3_600, count: 10_000 },
      removeOnFail: { age: 2 * 86_400, count: 10_000 },
    });
    expect(config.retention.eventStreamMaxLen).toBe(0);
  });

  it('are said in one line by validate', () => {
    expect(describeRetention(load('').config.retention)).toBe(
      'retention: done events removed once done, failed events 7d, dead letters 30d, quarantine 30d, conversations 30d after the last customer message, recorded events 7d, dedupe 3d, event stream ~100 entries per queue',
    );
  });
});

describe('retention: refused as written', () => {
  it.each([
    [
      'a retention below a second',
      'retention: { failed_events: 500ms }\n',
      ['r.yaml:6:29: retention.failed_events: must be at least 1s'],
    ],
    [
      'a dead_letters of 0s',
      'retention: { dead_letters: 0s }\n',
      ['r.yaml:6:28: retention.dead_letters: must be at least 1s'],
    ],
    [
      'a number for a duration',
      'retention: { conversations: 30 }\n',
      [
        'r.yaml:6:29: retention.conversations: expected a duration such as 500ms, 15s, 15m, 12h or 7d, got the number 30',
      ],
    ],
    [
      'a dedupe under a minute',
      'retention: { dedupe: 30s }\n',
      ['r.yaml:6:22: retention.dedupe: must be from 1m to 90d'],
    ],
    [
      'a dedupe over 90 days',
      'retention: { dedupe: 91d }\n',
      ['r.yaml:6:22: retention.dedupe: must be from 1m to 90d'],
    ],
    [
      'a negative event_stream',
      'retention: { event_stream: -1 }\n',
      ['r.yaml:6:28: retention.event_stream: must be at least 0'],
    ],
    [
      'an event_stream over a million',
      'retention: { event_stream: 2000000 }\n',
      ['r.yaml:6:28: retention.event_stream: must be at most 1000000'],
    ],
    [
      'an unknown key',
      'retention: { completed_jobs: 1h }\n',
      [
        'r.yaml:6:14: retention.completed_jobs: unknown key "completed_jobs"; allowed here: done_events, failed_events, dead_letters, quarantine, conversations, recorded_events, dedupe, stories, event_stream',
      ],
    ],
    [
      'record.max_age beside retention.recorded_events',
      'record: { max_age: 1d }\nretention: { recorded_events: 2d }\n',
      [
        'r.yaml:6:20: record.max_age: record.max_age is the old name of retention.recorded_events, which is set too: remove record.max_age (retention.recorded_events is the one read)',
      ],
    ],
  ])('%s', (_name, text, expected) => {
    expect(problemsOf(text)).toEqual(expected);
  });

  it('receiver.dedupe_window beside retention.dedupe', () => {
    const text = `${HEAD.replace('secrets: [ w ]', 'secrets: [ w ]\n  dedupe_window: 48h')}retention: { dedupe: 24h }\n`;
    try {
      parseConfigText(text, { fileName: 'r.yaml', env: {} });
      throw new Error('loaded');
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      expect(error.issues.map(formatConfigIssue)).toEqual([
        'r.yaml:6:18: receiver.dedupe_window: receiver.dedupe_window is the old name of retention.dedupe, which is set too: remove receiver.dedupe_window (retention.dedupe is the one read)',
      ]);
    }
  });

  it('in a business: shared by all businesses, at the top level only', () => {
    const text =
      'platform: { form: current }\nreceiver: { port: 8080 }\nbusinesses:\n  - id: toko-a\n    platform: { base_url: https://a.example.com, auth: { business_id: biz_a, secret: sa } }\n    retention: { conversations: 1d }\n';
    try {
      parseConfigText(text, { fileName: 'bridge.yaml', env: {} });
      throw new Error('loaded');
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      expect(error.issues.map(formatConfigIssue)).toEqual([
        'bridge.yaml:6:5: business "toko-a": retention is shared by all businesses and belongs at the top level: move it there',
      ]);
    }
  });
});

describe('retention: the old key names still work, with a warning', () => {
  it('record.max_age is read as retention.recorded_events', () => {
    const { config, warnings } = load('record: { max_age: 2d }\n');
    expect(config.retention.recordedEventsMs).toBe(2 * 86_400_000);
    expect(config.oldKeys).toEqual([
      { path: ['record', 'max_age'], replacement: 'retention.recorded_events' },
    ]);
    expect(warnings.map(formatConfigIssue)).toEqual([
      'r.yaml:6:11: record.max_age is an old name: write it as retention.recorded_events (read as that for now; both at once are refused)',
    ]);
  });

  it('receiver.dedupe_window is read as retention.dedupe', () => {
    const text = `${HEAD.replace('secrets: [ w ]', 'secrets: [ w ]\n  dedupe_window: 48h')}`;
    const { config, warnings } = parseConfigText(text, { fileName: 'r.yaml', env: {} });
    expect(config.retention.dedupeMs).toBe(48 * 3_600_000);
    expect(receiverOptionsFromConfig(config).dedupeWindowSeconds).toBe(48 * 3_600);
    expect(warnings.map(formatConfigIssue)).toEqual([
      'r.yaml:6:3: receiver.dedupe_window is an old name: write it as retention.dedupe (read as that for now; both at once are refused)',
    ]);
  });
});

describe('retention: warnings about values too short for what relies on them', () => {
  it('a dedupe shorter than the platform redelivers', () => {
    expect(warningsOf('retention: { dedupe: 2m }\n')).toEqual([
      "r.yaml:6:22: retention.dedupe (2m) is shorter than the platform's redeliveries (up to 5m): a duplicate that arrives later is taken as new, and its rules may act twice; keep it at 5m or more",
    ]);
    expect(warningsOf('retention: { dedupe: 5m }\n')).toEqual([]);
  });

  it('a reply window, a cooldown or a once_per_conversation longer than conversations', () => {
    const rules = `retention: { conversations: 1h }
rules:
  - name: hello
    on: message_in
    cooldown: 2h
    then:
      - reply: { text: "halo", once_per_conversation: 12h }
      - after: 5m
        then: [ { reply: { text: "masih di sana?", once_per_conversation: 30m } } ]
`;
    expect(warningsOf(rules)).toEqual([
      "r.yaml:6:29: retention.conversations (1h) is shorter than the reply window (reply_window.hours: 24): a conversation forgets its last customer message while the window may still be open, and the bridge asks the platform's history again for it",
      'r.yaml:10:15: rules.0 (hello): cooldown (2h) is longer than retention.conversations (1h): a conversation quiet that long forgets the mark, and the action may run again sooner; raise retention.conversations',
      'r.yaml:12:55: rules.0.then.0.reply.once_per_conversation (12h) is longer than retention.conversations (1h): a conversation quiet that long forgets the mark, and the action may run again sooner; raise retention.conversations',
    ]);
  });
});

describe('retention: no warning about the reply window when no channel has one', () => {
  it('reply_window.applies_to: [] with a short conversations', () => {
    expect(warningsOf('retention: { conversations: 1h }\nreply_window: { applies_to: [] }\n')).toEqual([]);
  });
});
