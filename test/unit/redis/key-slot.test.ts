import { describe, expect, it } from 'vitest';
import { keyInSlotRange, keySlot } from '../../../src/redis/key-slot.js';

// Expected slots are CLUSTER KEYSLOT answers of a Redis 7.0 cluster node (the integration test
// test/integration/shared/redis-topology.test.ts checks more keys against a live node).
describe('keySlot', () => {
  it.each([
    ['123456789', 12739], // CRC16/XMODEM check value 0x31C3
    ['foo', 12182],
    ['bar', 5061],
    ['{user1000}.following', 3443],
    ['{user1000}.followers', 3443],
    ['foo{}{bar}', 8363], // an empty tag: the whole key is hashed
    ['foo{{bar}}zap', 4015], // the tag is "{bar"
    ['foo{bar}{zap}', 5061], // only the first tag counts
    ['', 0],
  ])('puts %j in slot %i', (key, slot) => {
    expect(keySlot(key)).toBe(slot);
  });

  it('hashes bytes, not UTF-16 code units', () => {
    expect(keySlot('é')).toBe(keySlot(Buffer.from('é', 'utf8')));
  });
});

describe('keyInSlotRange', () => {
  it.each([
    [0, 5460],
    [5461, 10922],
    [10923, 16383],
    [42, 42],
  ])('finds a key in slots %i-%i', (start, end) => {
    const slot = keySlot(keyInSlotRange(start, end));
    expect(slot).toBeGreaterThanOrEqual(start);
    expect(slot).toBeLessThanOrEqual(end);
  });
});
