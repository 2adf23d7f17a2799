import { readFileSync } from 'node:fs';
import { z } from 'zod';

/**
 * The version in package.json, read next to the code (src/cli or dist/cli are both two folders
 * below the package root), so `convo-bridge --version` always says what is installed.
 */
export function packageVersion(): string {
  const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
  return z.object({ version: z.string() }).parse(JSON.parse(text)).version;
}
