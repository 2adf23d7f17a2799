import { describe, expect, it } from 'vitest';
import { BridgeListenError, explainListenFailure } from '../../../src/bridge/listen-error.js';

const failure = (code: string) => Object.assign(new Error(`listen ${code}: 127.0.0.1:80`), { code });
const target = { host: '127.0.0.1', port: 80, setting: 'demo --port', change: 'pass another --port' };

/** Every way a listen fails that the operator can fix names the setting that chose the port. */
describe('explainListenFailure', () => {
  it.each([
    [
      'EADDRINUSE',
      'cannot listen on 127.0.0.1:80 (demo --port): the port is already in use by another process; stop it, or pass another --port',
    ],
    [
      'EACCES',
      'cannot listen on 127.0.0.1:80 (demo --port): permission denied (ports below 1024 need privileges); pass another --port',
    ],
    [
      'EADDRNOTAVAIL',
      'cannot listen on 127.0.0.1:80 (demo --port): this machine has no address 127.0.0.1; set receiver.host to one of its addresses (0.0.0.0 for all)',
    ],
  ])('%s', (code, message) => {
    const cause = failure(code);
    const explained = explainListenFailure(cause, target);
    expect(explained).toBeInstanceOf(BridgeListenError);
    expect((explained as BridgeListenError).message).toBe(message);
    expect((explained as BridgeListenError).cause).toBe(cause);
  });

  it('leaves any other error as it is', () => {
    const other = failure('EMFILE');
    expect(explainListenFailure(other, target)).toBe(other);
  });
});
