import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../../src/receive/normalize/canonical-json.js';
import { normalizeEvent } from '../../../../src/receive/normalize/normalize-event.js';

/** The earlier recursive version, as the reference for what the text must be. */
function recursiveCanonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => recursiveCanonicalJson(item ?? null)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const parts: string[] = [];
    for (const key of Object.keys(record).sort()) {
      const item = record[key];
      if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
      parts.push(`${JSON.stringify(key)}:${recursiveCanonicalJson(item)}`);
    }
    return `{${parts.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

const nested = (depth: number, open: string, close: string, core: string) =>
  `${open.repeat(depth)}${core}${close.repeat(depth)}`;

describe('canonicalJson at any depth (regression: the body hash overflowed the stack)', () => {
  it('writes exactly what the recursive version wrote, for any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        expect(canonicalJson(value)).toBe(recursiveCanonicalJson(value));
      }),
      { numRuns: 2_000 },
    );
  });

  it.each([
    ['arrays, 100,000 levels', nested(100_000, '[', ']', '1')],
    ['objects, 100,000 levels', nested(100_000, '{"k":', '}', 'null')],
    ['__proto__ objects, 20,000 levels', nested(20_000, '{"__proto__":', '}', '{}')],
  ])('writes %s without overflowing', (_name, text) => {
    expect(canonicalJson(JSON.parse(text))).toBe(text);
  });

  it('a body without a message id gets its key however deep an unknown key is nested', () => {
    // Found by test/hostile: 3,000 levels under an unknown key made the body "unreadable" (quarantined)
    // while the same event with a shallow extra key was queued.
    const body = JSON.parse(
      `{"event":"conversation.assigned","conversation_id":"c-1","x-extra":${nested(50_000, '[', ']', '0')}}`,
    );
    const result = normalizeEvent(body, { receivedAt: new Date('2026-03-01T08:00:00.000Z') });
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.event.key).toMatch(/^conversation\.assigned\|body:[0-9a-f]{64}$/);
  });
});
