import { describe, expect, it } from 'vitest';
import { DeliveryProgress, nextDeliveryStatus } from '../../../src/emulator/delivery-progress.js';
import type { StoredMessage } from '../../../src/emulator/emulator-state.js';

const message = (): StoredMessage => ({
  id: 1,
  messageId: 'm1',
  conversationId: 'c1',
  origin: 'api',
  sender: 'agent',
  senderName: 'Toko',
  type: 'text',
  body: 'hi',
  caption: '',
  mimeType: 'text/plain',
  sentAtMs: 0,
  deliveryStatus: 'pending',
  replyToMessageId: null,
  isNote: false,
});

describe('nextDeliveryStatus', () => {
  it.each([
    ['pending', false, 'delivered', 'sent'],
    ['pending', true, 'delivered', 'failed'],
    ['sent', false, 'delivered', 'delivered'],
    ['delivered', false, 'delivered', undefined],
    ['delivered', false, 'read', 'read'],
    ['read', false, 'read', undefined],
    ['failed', true, 'read', undefined],
  ] as const)('%s (outside window: %s, final %s) -> %s', (current, outside, final, next) => {
    expect(nextDeliveryStatus(current, outside, final)).toBe(next);
  });
});

describe('DeliveryProgress', () => {
  it('immediate: sets the final status at once', () => {
    const progress = new DeliveryProgress({ kind: 'immediate' }, 'read', Date.now);
    const ok = message();
    const failing = message();
    progress.track(ok, false);
    progress.track(failing, true);
    expect([ok.deliveryStatus, failing.deliveryStatus]).toEqual(['read', 'failed']);
    expect(progress.pending).toBe(0);
  });

  it('manual: one step per advance, then nothing is left', () => {
    const progress = new DeliveryProgress({ kind: 'manual' }, 'delivered', Date.now);
    const m = message();
    progress.track(m, false);
    const seen = [m.deliveryStatus];
    for (let i = 0; i < 3; i += 1) {
      progress.advance();
      seen.push(m.deliveryStatus);
    }
    expect(seen).toEqual(['pending', 'sent', 'delivered', 'delivered']);
    expect(progress.pending).toBe(0);
    expect(progress.advance()).toBe(0);
  });

  it('manual: a status set by hand in between is continued from', () => {
    const progress = new DeliveryProgress({ kind: 'manual' }, 'read', Date.now);
    const m = message();
    progress.track(m, false);
    m.deliveryStatus = 'delivered';
    progress.advance();
    expect(m.deliveryStatus).toBe('read');
  });
});
