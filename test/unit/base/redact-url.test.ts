import { describe, expect, it } from 'vitest';
import { looksLikeUrlWithCredentials, redactUrl } from '../../../src/base/redact-url.js';

describe('redactUrl', () => {
  it.each([
    ['redis://:hunter2@db:6379', 'redis://:***@db:6379'],
    ['rediss://app:hunter2@db.example.com:6380/0', 'rediss://app:***@db.example.com:6380/0'],
    ['redis://db:6379', 'redis://db:6379'],
    ['https://api.example.com/', 'https://api.example.com'],
    // Not parseable (a bad port, a # in the password): all between :// and the last @ is hidden.
    ['redis://:hunter2@db:99999', 'redis://***@db:99999'],
    ['redis://:hun#ter2@db:6379', 'redis://***@db:6379'],
    ['redis://:hun/ter@2@db:6379', 'redis://***@db:6379'],
    ['10.0.0.5:26379', '10.0.0.5:26379'],
    ['plain text with an @ sign', 'plain text with an @ sign'],
  ])('%s -> %s', (text, shown) => {
    expect(redactUrl(text)).toBe(shown);
    expect(redactUrl(text)).not.toContain('hunter2');
  });

  it('tells URLs with credentials from other text', () => {
    expect(looksLikeUrlWithCredentials('redis://:x@h:1')).toBe(true);
    expect(looksLikeUrlWithCredentials('redis://h:1')).toBe(false);
    expect(looksLikeUrlWithCredentials('someone@example.com')).toBe(false);
  });
});
