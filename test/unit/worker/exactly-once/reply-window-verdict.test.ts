import { describe, expect, it } from 'vitest';
import { parseWib } from '../../../../src/base/wib-time.js';
import { replyWindowVerdict } from '../../../../src/worker/exactly-once/reply-window-verdict.js';

// Window arithmetic from WIB timestamps, as the platform writes them (`sent_at`, webhook times).
const wib = (text: string): Date => {
  const date = parseWib(text);
  if (!date) throw new Error(`not a WIB time: ${text}`);
  return date;
};
const lastCustomer = wib('2026-11-20 08:00:00'); // = 2026-11-20T01:00:00Z
const closesAt = new Date(lastCustomer.getTime() + 24 * 3_600_000); // 2026-11-21 08:00:00 WIB
const window = (now: Date) => ({ applies: true, open: now < closesAt, closesAt });
const MARGIN = 60_000;

describe('replyWindowVerdict (24-hour window, WIB times)', () => {
  it('closes exactly 24 hours after the last customer message', () => {
    expect(closesAt.toISOString()).toBe('2026-11-21T01:00:00.000Z');
    expect(wib('2026-11-21 08:00:00').getTime()).toBe(closesAt.getTime());
  });

  it.each([
    ['2026-11-20 08:00:01', true, 'just after the customer wrote'],
    ['2026-11-21 07:58:59', true, '61 s before the edge: outside the margin'],
    ['2026-11-21 07:59:00', false, 'exactly the margin before the edge: held'],
    ['2026-11-21 07:59:59', false, '1 s before the edge: held by the margin'],
    ['2026-11-21 08:00:00', false, 'at the edge: closed'],
    ['2026-11-22 09:00:00', false, '25 h later: closed'],
  ])('at %s WIB -> send %s (%s)', (now, send) => {
    const at = wib(now);
    expect(replyWindowVerdict(window(at), at, MARGIN).send).toBe(send);
  });

  it('tells why a reply is held: margin, closed, or no known customer message', () => {
    const nearEdge = wib('2026-11-21 07:59:30');
    expect(replyWindowVerdict(window(nearEdge), nearEdge, MARGIN)).toMatchObject({
      send: false,
      reason: 'margin',
    });
    const after = wib('2026-11-21 09:00:00');
    expect(replyWindowVerdict(window(after), after, MARGIN)).toMatchObject({ send: false, reason: 'closed' });
    expect(replyWindowVerdict({ applies: true, open: false, closesAt: null }, after, MARGIN)).toEqual({
      send: false,
      reason: 'unknown',
      closesAt: null,
    });
  });

  it('gives the client a guard one margin before the edge', () => {
    const at = wib('2026-11-21 06:00:00');
    expect(replyWindowVerdict(window(at), at, MARGIN)).toEqual({
      send: true,
      guardUntil: new Date(closesAt.getTime() - MARGIN),
    });
  });

  it('always sends on channels without a window (WhatsApp QR, Telegram, web chat...)', () => {
    const at = wib('2026-11-30 00:00:00');
    expect(replyWindowVerdict({ applies: false, open: true, closesAt: null }, at, MARGIN)).toEqual({
      send: true,
      guardUntil: null,
    });
  });
});

describe('replyWindowVerdict edges', () => {
  it('trusts a window reported closed even when its end is still ahead', () => {
    const at = wib('2026-11-20 12:00:00');
    expect(replyWindowVerdict({ applies: true, open: false, closesAt }, at, MARGIN)).toEqual({
      send: false,
      reason: 'closed',
      closesAt,
    });
  });

  it('calls a window that ends right now closed, not a matter of margin (even with no margin)', () => {
    const open = { applies: true, open: true, closesAt };
    expect(replyWindowVerdict(open, closesAt, MARGIN)).toEqual({ send: false, reason: 'closed', closesAt });
    expect(replyWindowVerdict(open, closesAt, 0)).toEqual({ send: false, reason: 'closed', closesAt });
    const justBefore = new Date(closesAt.getTime() - 1);
    expect(replyWindowVerdict(open, justBefore, 0)).toEqual({ send: true, guardUntil: closesAt });
    expect(replyWindowVerdict(open, justBefore, 1)).toEqual({ send: false, reason: 'margin', closesAt });
  });
});
