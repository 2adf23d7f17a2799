// `npm run build` (also `prepare`, so `npm install` and npx's first run build too): tsc with an
// incremental build-info file (dist/.tsbuildinfo), so a build with nothing changed takes a third
// of a full one. tsc's incremental mode trusts its build-info file and does not re-emit an output
// that was deleted by hand, so when any compiled file of src/ is missing from dist/, the build-info
// file is removed first and the build is a full one.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';

const BUILD_INFO = 'dist/.tsbuildinfo';
const missing = readdirSync('src', { recursive: true })
  .map(String)
  .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
  .map((file) => `dist/${file.slice(0, -'.ts'.length)}.js`)
  .filter((output) => !existsSync(output));
if (missing.length > 0 && existsSync(BUILD_INFO)) rmSync(BUILD_INFO);

// Outputs whose source was moved or deleted: tsc never removes them, and dist/ is what the package
// ships, so nothing may stay there that src/ no longer has.
if (existsSync('dist')) {
  for (const output of readdirSync('dist', { recursive: true }).map(String)) {
    const stem = output.replace(/\.(js|js\.map|d\.ts|d\.ts\.map)$/, '');
    if (stem === output) continue;
    if (!existsSync(`src/${stem}.ts`)) rmSync(`dist/${output}`);
  }
  const removeEmpty = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) removeEmpty(`${dir}/${entry.name}`);
    }
    if (dir !== 'dist' && readdirSync(dir).length === 0) rmSync(dir, { recursive: true });
  };
  removeEmpty('dist');
}

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const result = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
if (result.status !== 0) process.exit(result.status ?? 1);
chmodSync('dist/cli.js', 0o755);
