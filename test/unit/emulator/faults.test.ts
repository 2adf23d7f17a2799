import { describe, expect, it } from 'vitest';
import { EmulatorError } from '../../../src/emulator/emulator-error.js';
import { FaultRegistry } from '../../../src/emulator/faults.js';
import { createSeededRandom } from '../../../src/emulator/seeded-random.js';

describe('FaultRegistry', () => {
  it('fires on the draws below the fraction, reproducibly for a seed', () => {
    const registry = new FaultRegistry(5);
    registry.add({ type: 'error', fraction: 0.25 });
    const random = createSeededRandom(5);
    for (let i = 0; i < 200; i += 1) {
      const expected = random() < 0.25;
      expect(registry.decide('send').failure !== undefined).toBe(expected);
    }
  });

  it('fills defaults and sums latency by mode', () => {
    const registry = new FaultRegistry(1);
    const fault = registry.add({ type: 'error' });
    expect(fault).toMatchObject({
      endpoint: 'all',
      fraction: 1,
      mode: 'before',
      status: 500,
      delivery: 'form',
      fired: 0,
    });
    registry.clear();
    registry.add({ type: 'latency', latencyMs: 10 });
    registry.add({ type: 'latency', latencyMs: 5, mode: 'after' });
    registry.add({ type: 'latency', latencyMs: 7, endpoint: 'history' });
    expect(registry.decide('note')).toMatchObject({
      latencyBeforeMs: 10,
      latencyAfterMs: 5,
      failure: undefined,
    });
    expect(registry.decide('history')).toMatchObject({ latencyBeforeMs: 17, latencyAfterMs: 5 });
  });

  it('uses the first failure that fires and removes faults whose times ran out', () => {
    const registry = new FaultRegistry(1);
    const drop = registry.add({ type: 'drop', times: 1 });
    registry.add({ type: 'error' });
    expect(registry.decide('send').failure?.id).toBe(drop.id);
    expect(registry.decide('send').failure?.type).toBe('error');
    expect(registry.list().map((f) => f.type)).toEqual(['error']);
  });

  it('spares the health check unless it is named', () => {
    const registry = new FaultRegistry(1);
    registry.add({ type: 'error' });
    expect(registry.decide('health').failure).toBeUndefined();
    registry.add({ type: 'drop', endpoint: 'health' });
    expect(registry.decide('health').failure?.type).toBe('drop');
  });

  it.each([
    [{ type: 'error', fraction: -0.1 }, 'invalid fault: fraction: '],
    [{ type: 'rate_limit', retryAfterSeconds: 1.5 }, 'invalid fault: retryAfterSeconds: '],
    [{ type: 'rate_limit', mode: 'after' }, 'invalid fault: mode: a rate_limit fault answers before acting'],
    [{ type: 'latency', latencyMs: -1 }, 'invalid fault: latencyMs: '],
    [{ type: 'drop', times: 0 }, 'invalid fault: times: '],
    [{ fraction: 1 }, 'invalid fault: type: '],
    ['error', 'invalid fault: '],
  ])('rejects %j', (input, prefix) => {
    const registry = new FaultRegistry(1);
    let thrown: unknown;
    try {
      registry.add(input);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(EmulatorError);
    expect((thrown as EmulatorError).code).toBe('EMULATOR_BAD_REQUEST');
    expect((thrown as EmulatorError).message.startsWith(prefix)).toBe(true);
  });

  it('throws not-found for an unknown id', () => {
    expect(() => new FaultRegistry(1).remove('fault-9')).toThrow(
      'fault "fault-9" does not exist: list them with GET /_emulator/faults',
    );
  });
});
