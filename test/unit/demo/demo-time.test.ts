import { describe, expect, it } from 'vitest';
import { formatWib } from '../../../src/base/wib-time.js';
import { createDemoClock } from '../../../src/demo/demo-clock.js';
import { parseClockTime, pickDemoMorning } from '../../../src/demo/demo-morning.js';

const wib = (text: string) => Date.parse(`${text}+07:00`);

describe('pickDemoMorning', () => {
  it.each([
    ['Saturday noon -> Monday (Sunday 07:35 still ahead)', '2026-11-21T12:00:00', '2026-11-23'],
    ['Monday 06:00 -> Tuesday (Monday 07:35 is ahead)', '2026-11-23T06:00:00', '2026-11-24'],
    ['Monday 08:00 -> Wednesday (Monday 07:35 has passed)', '2026-11-23T08:00:00', '2026-11-25'],
    [
      'Thursday 20:00 -> Monday (Friday morning is ahead, but Saturday is no working day)',
      '2026-11-26T20:00:00',
      '2026-11-30',
    ],
    ['Thursday 06:00 -> Friday', '2026-11-26T06:00:00', '2026-11-27'],
  ])('%s', (_name, now, date) => {
    const morning = pickDemoMorning(wib(now));
    expect(morning.date).toBe(date);
    expect(formatWib(new Date(morning.at('07:40')))).toBe(`${date} 07:40:00`);
    expect(morning.at('07:35', -1)).toBeGreaterThan(wib(now));
  });

  it('skips holidays', () => {
    expect(pickDemoMorning(wib('2026-12-24T06:00:00'), { holidays: ['2026-12-25'] }).date).toBe('2026-12-28');
  });

  it('the day before is one day earlier at the given time', () => {
    const morning = pickDemoMorning(wib('2026-11-21T12:00:00'));
    expect(formatWib(new Date(morning.at('07:35', -1)))).toBe('2026-11-22 07:35:00');
  });

  it('gives up, with a reason, when every day is a holiday', () => {
    const holidays = Array.from({ length: 70 }, (_, i) =>
      new Date(Date.UTC(2026, 10, 22 + i)).toISOString().slice(0, 10),
    );
    expect(() => pickDemoMorning(wib('2026-11-21T12:00:00'), { holidays })).toThrow(
      'no working day in the next 60 days (check business_hours.holidays)',
    );
  });

  it.each(['7:40', '07:4', '0740', 'ab:cd', ''])('rejects the clock time %j', (time) => {
    expect(() => parseClockTime(time)).toThrow(`not a HH:MM time: ${JSON.stringify(time)}`);
  });
});

describe('createDemoClock', () => {
  it('starts at the given instant and runs at real speed', () => {
    let real = 1_000;
    const clock = createDemoClock(50_000, () => real);
    expect(clock.now()).toBe(50_000);
    real += 250;
    expect(clock.now()).toBe(50_250);
    expect(clock.date()).toEqual(new Date(50_250));
  });

  it('jumps forward, and ignores jumps into the past', () => {
    let real = 0;
    const clock = createDemoClock(10_000, () => real);
    clock.advanceTo(90_000);
    expect(clock.now()).toBe(90_000);
    clock.advanceTo(20_000);
    expect(clock.now()).toBe(90_000);
    real += 5;
    expect(clock.now()).toBe(90_005);
  });
});
