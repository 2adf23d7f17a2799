import { ConvoBridgeError } from '../base/errors.js';

/**
 * A port the bridge cannot listen on, named with the setting that chose it (`receiver.port in
 * FILE`, `work --port`, `demo --port`) and how to change it, as the emulator does for its own.
 */
export class BridgeListenError extends ConvoBridgeError {
  constructor(message: string, options: { cause: unknown }) {
    super(message, { code: 'BRIDGE_PORT_UNAVAILABLE', ...options });
  }
}

export interface ListenTarget {
  host: string;
  port: number;
  /** Where the port was set, e.g. `receiver.port in config/bridge.yaml` or `--port`. */
  setting: string;
  /** How to set another, e.g. `set receiver.port to another port` or `pass another --port`. */
  change: string;
}

/** The error of a failed listen, explained when it is a taken or forbidden port; else unchanged. */
export function explainListenFailure(error: unknown, target: ListenTarget): unknown {
  const code = error instanceof Error && 'code' in error ? error.code : undefined;
  const where = `cannot listen on ${target.host}:${target.port} (${target.setting})`;
  if (code === 'EADDRINUSE') {
    return new BridgeListenError(
      `${where}: the port is already in use by another process; stop it, or ${target.change}`,
      { cause: error },
    );
  }
  if (code === 'EACCES') {
    return new BridgeListenError(
      `${where}: permission denied (ports below 1024 need privileges); ${target.change}`,
      { cause: error },
    );
  }
  if (code === 'EADDRNOTAVAIL') {
    return new BridgeListenError(
      `${where}: this machine has no address ${target.host}; set receiver.host to one of its addresses (0.0.0.0 for all)`,
      { cause: error },
    );
  }
  return error;
}
