import { describe, expect, it } from 'vitest';
import { BoundedLog } from '../../../src/emulator/bounded-log.js';
import { matchPlatformRoute } from '../../../src/emulator/platform-routes.js';
import { createSeededRandom } from '../../../src/emulator/seeded-random.js';
import { answersSuccess } from '../../../src/emulator/webhook-dispatcher.js';

describe('BoundedLog', () => {
  it('keeps the newest entries, oldest first', () => {
    const log = new BoundedLog<number>(3);
    for (let i = 1; i <= 5; i += 1) log.push(i);
    expect(log.toArray()).toEqual([3, 4, 5]);
    expect(log.toArray(2)).toEqual([4, 5]);
    expect(log.toArray(0)).toEqual([]);
    expect([log.size, log.totalAppended]).toEqual([3, 5]);
    log.clear();
    expect(log.toArray()).toEqual([]);
    expect(() => new BoundedLog(0)).toThrow(RangeError);
  });
});

describe('createSeededRandom', () => {
  it('repeats for a seed and differs between seeds, within [0, 1)', () => {
    const a = createSeededRandom(9);
    const b = createSeededRandom(9);
    const c = createSeededRandom(10);
    const seqA = Array.from({ length: 100 }, () => a());
    expect(Array.from({ length: 100 }, () => b())).toEqual(seqA);
    expect(Array.from({ length: 100 }, () => c())).not.toEqual(seqA);
    expect(seqA.every((x) => x >= 0 && x < 1)).toBe(true);
  });
});

describe('matchPlatformRoute', () => {
  it.each([
    ['POST', '/v1/message', { endpoint: 'send', conversationId: null }],
    ['POST', '/v1/message/', { endpoint: 'send', conversationId: null }],
    ['GET', '/v1/message/abc%20def', { endpoint: 'history', conversationId: 'abc def' }],
    ['GET', '/v1/message', { endpoint: 'history', conversationId: '' }],
    ['HEAD', '/health', { endpoint: 'health', conversationId: null }],
    ['POST', '/v1/note', { endpoint: 'note', conversationId: null }],
    ['POST', '/v1/conversation/need-human', { endpoint: 'needHuman', conversationId: null }],
    ['GET', '/v1/conversation/need-human/total', { endpoint: 'needHumanTotal', conversationId: null }],
    ['GET', '/version', { endpoint: 'version', conversationId: null }],
    ['GET', '/v1/message/a/b', undefined],
    ['GET', '/v1/message/%E0%A4%A', undefined],
    ['GET', '/v1/note', undefined],
    ['DELETE', '/v1/message', undefined],
  ])('%s %s', (method, path, route) => {
    expect(matchPlatformRoute(method, path)).toEqual(route);
  });
});

describe('answersSuccess', () => {
  it.each([
    ['{"success":true}', true],
    ['{"success":true,"id":1}', true],
    ['{"success":"true"}', false],
    ['{"success":false}', false],
    ['true', false],
    ['OK', false],
    ['', false],
    ['null', false],
  ])('%j -> %s', (body, ok) => {
    expect(answersSuccess(body)).toBe(ok);
  });
});
