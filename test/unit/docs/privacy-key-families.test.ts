import { describe, expect, it } from 'vitest';
import { layoutRecordKey } from '../../../src/queue/layout-record.js';
import { bridgeKeys } from '../../../src/queue/redis-keys.js';
import { familyMatcher, privacyKeyFamilies } from '../../support/privacy-families.js';

/** Properties of bridgeKeys that are roots or names, not keys. */
const NOT_KEYS = new Set(['prefix', 'globalPrefix', 'queuePrefix', 'naming', 'dedupePrefix']);

/** Every key family of the bridge's own keys, as docs/privacy.md writes it. */
function codeFamilies(): string[] {
  const keys = bridgeKeys('{prefix}', '{prefix}') as Record<string, unknown>;
  const families: string[] = [];
  for (const [name, value] of Object.entries(keys)) {
    if (NOT_KEYS.has(name)) continue;
    if (typeof value === 'string') families.push(value);
    else if (typeof value === 'function') {
      const key = String(value('ID'));
      families.push(key.replace(/[0-9a-f]{32,64}/, '<hash>').replace(/:ID$/, ':<id>'));
    } else throw new Error(`bridgeKeys().${name} is neither a key nor a key function`);
  }
  families.push(layoutRecordKey('{prefix}', false));
  const order = (keys.order as (id: string) => string)('ID').replace(/[0-9a-f]{32}/, '<hash>');
  families.push(`${order}:ghost:*`); // processor/order-gate.ts
  return families;
}

describe('docs/privacy.md lists every key family (issue 27)', () => {
  const documented = privacyKeyFamilies();

  it('reads the table', () => {
    expect(documented.length).toBeGreaterThan(15);
  });

  it.each(codeFamilies())('%s has a row', (family) => {
    expect(documented).toContain(family);
  });

  it('has no row for a family the code no longer writes (BullMQ families aside)', () => {
    const code = new Set(codeFamilies());
    const stale = documented.filter((f) => !code.has(f) && !/^\{prefix\}:(events|timers)(:|$)/.test(f));
    expect(stale).toEqual([]);
  });

  it('matches real key names, tagged or not, with a business or not', () => {
    const conv = documented.find((f) => f.includes(':conv:')) as string;
    expect(familyMatcher(conv, 'cb').test('cb:bridge:conv:0123abcd')).toBe(true);
    expect(familyMatcher(conv, 'cb').test('{cb:3.17}:bridge:b:toko-a:conv:0123abcd')).toBe(true);
    expect(familyMatcher(conv, 'cb').test('{cbx}:bridge:conv:0123abcd')).toBe(false);
    expect(familyMatcher('{prefix}:bridge:arrival', 'cb').test('cb:bridge:arrival:x')).toBe(false);
  });
});
