// Loaded with `node --import` (through NODE_OPTIONS) by test/integration/observe/tracing.e2e.test.ts:
// appends the URL of every module the process resolves through the ESM loader to
// $MODULE_PROBE_FILE, so a test can tell which modules a bridge loaded.
import { register } from 'node:module';

if (process.env.MODULE_PROBE_FILE) {
  register(new URL('./module-probe-hooks.mjs', import.meta.url), {
    data: { file: process.env.MODULE_PROBE_FILE },
  });
}
