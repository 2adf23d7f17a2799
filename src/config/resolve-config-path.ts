import { existsSync } from 'node:fs';
import type { Env } from './interpolate-env.js';

export const DEFAULT_CONFIG_PATH = 'config/bridge.yaml';

/**
 * Which config file a command uses: `--config FILE` when given, else `config/bridge.yaml` when
 * it exists, else `$CONVO_BRIDGE_CONFIG`. Undefined when none applies.
 */
export function resolveConfigPath(
  flag: string | undefined,
  env: Env = process.env,
  exists: (path: string) => boolean = existsSync,
): string | undefined {
  if (flag !== undefined && flag !== '') return flag;
  if (exists(DEFAULT_CONFIG_PATH)) return DEFAULT_CONFIG_PATH;
  const fromEnv = env.CONVO_BRIDGE_CONFIG;
  return fromEnv !== undefined && fromEnv !== '' ? fromEnv : undefined;
}
