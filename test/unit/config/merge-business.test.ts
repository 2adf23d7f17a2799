import { describe, expect, it } from 'vitest';
import type { ConfigPath } from '../../../src/config/config-document.js';
import { mergeOverDefaults, provenanceOf } from '../../../src/config/merge-business.js';

const DEFAULTS = {
  platform: { form: 'current', timeout: '5s', auth: { scheme: 'headers' }, retry: { retries: 2 } },
  business_hours: { weekly: { 'mon-fri': '08:00-17:00' }, holidays: ['2026-12-25'] },
  destinations: { crm: { url: 'https://crm.example.com', secret: 's' } },
  rules: [{ name: 'shared' }],
  timezone: 'Asia/Jakarta',
};

const ENTRY = {
  platform: { base_url: 'https://a.example.com', auth: { business_id: 'biz_a', secret: 'a' } },
  business_hours: { weekly: { 'sat-sun': '10:00-14:00' } },
  destinations: {
    crm: { url: 'https://crm.toko-a.example.com' },
    helpdesk: { url: 'https://h.example.com' },
  },
  rules: [{ name: 'own' }],
};

describe('mergeOverDefaults', () => {
  const merged = mergeOverDefaults(DEFAULTS, ENTRY) as Record<string, unknown>;

  it('merges mappings key by key at every depth', () => {
    expect(merged.platform).toEqual({
      form: 'current',
      timeout: '5s',
      auth: { scheme: 'headers', business_id: 'biz_a', secret: 'a' },
      retry: { retries: 2 },
      base_url: 'https://a.example.com',
    });
    expect(merged.destinations).toEqual({
      crm: { url: 'https://crm.toko-a.example.com', secret: 's' },
      helpdesk: { url: 'https://h.example.com' },
    });
  });

  it('replaces lists, values and business_hours.weekly (its keys are day ranges)', () => {
    expect(merged.rules).toEqual([{ name: 'own' }]);
    expect(merged.business_hours).toEqual({ weekly: { 'sat-sun': '10:00-14:00' }, holidays: ['2026-12-25'] });
    expect(mergeOverDefaults(DEFAULTS, { timezone: 'Asia/Makassar' })).toMatchObject({
      timezone: 'Asia/Makassar',
    });
  });

  it('shares what the entry does not set (so shared rules can be compiled once) and changes neither side', () => {
    const alone = mergeOverDefaults(DEFAULTS, {
      platform: { base_url: 'https://b.example.com' },
    }) as typeof DEFAULTS;
    expect(alone.rules).toBe(DEFAULTS.rules);
    expect(alone.platform.auth).toBe(DEFAULTS.platform.auth);
    expect(DEFAULTS.platform).not.toHaveProperty('base_url');
    expect(ENTRY.platform.auth).toEqual({ business_id: 'biz_a', secret: 'a' });
  });

  it('keeps a key named __proto__ a plain key', () => {
    const entry = JSON.parse('{"destinations": {"__proto__": {"url": "https://x.example.com"}}}');
    const out = mergeOverDefaults(DEFAULTS, entry) as { destinations: Record<string, unknown> };
    expect(Object.getPrototypeOf(out.destinations)).toBe(Object.prototype);
    expect(Object.keys(out.destinations)).toEqual(['crm', '__proto__']);
  });
});

describe('provenanceOf', () => {
  it.each([
    ['a value only the entry writes', ['platform', 'base_url'], 'business', ['platform', 'base_url'], false],
    [
      'a value only the top level writes',
      ['platform', 'timeout'],
      'defaults',
      ['platform', 'timeout'],
      false,
    ],
    [
      'a key inside a merged mapping, from the top',
      ['platform', 'auth', 'scheme'],
      'defaults',
      ['platform', 'auth', 'scheme'],
      false,
    ],
    [
      'a key inside a merged mapping, from the entry',
      ['platform', 'auth', 'secret'],
      'business',
      ['platform', 'auth', 'secret'],
      false,
    ],
    [
      'anything under a list the entry replaced',
      ['rules', 0, 'name'],
      'business',
      ['rules', 0, 'name'],
      false,
    ],
    [
      'a day of the weekly hours the entry replaced',
      ['business_hours', 'weekly', 'sat-sun'],
      'business',
      ['business_hours', 'weekly', 'sat-sun'],
      false,
    ],
    [
      'the holidays it did not replace',
      ['business_hours', 'holidays', 0],
      'defaults',
      ['business_hours', 'holidays', 0],
      false,
    ],
    ['a key nobody wrote in a mapping both have', ['platform', 'rate_limit'], 'business', ['platform'], true],
    ['a key nobody wrote at the root', ['receiver'], 'business', [], true],
    ['the whole config', [], 'business', [], false],
    [
      'a key missing in a mapping only the top level has',
      ['platform', 'retry', 'max_delay'],
      'defaults',
      ['platform', 'retry', 'max_delay'],
      true,
    ],
  ] as [string, ConfigPath, 'business' | 'defaults', ConfigPath, boolean][])(
    '%s',
    (_name, path, from, at, missing) => {
      expect(provenanceOf(path, DEFAULTS, ENTRY)).toEqual({ from, path: at, missing });
    },
  );
});
