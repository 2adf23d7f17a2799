import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * `npm run build` (scripts/build.mjs) on a two-file project laid out like this one: tsc's
 * incremental mode trusts its build-info file and would not re-emit an output deleted by hand, so
 * the script must notice a missing output and build in full; and it keeps the launcher executable.
 */
describe('scripts/build.mjs', () => {
  const root = new URL('../../../', import.meta.url).pathname;
  let dir = '';
  const build = () => spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: dir, encoding: 'utf8' });

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'convo-bridge-build-'));
    mkdirSync(join(dir, 'scripts'));
    mkdirSync(join(dir, 'src', 'lib'), { recursive: true });
    copyFileSync(join(root, 'scripts', 'build.mjs'), join(dir, 'scripts', 'build.mjs'));
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
    writeFileSync(
      join(dir, 'tsconfig.build.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2023',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          strict: true,
          types: [],
          skipLibCheck: true,
          rootDir: 'src',
          outDir: 'dist',
          incremental: true,
          tsBuildInfoFile: 'dist/.tsbuildinfo',
        },
        include: ['src'],
      }),
    );
    writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
    writeFileSync(join(dir, 'src', 'cli.ts'), "import { two } from './lib/two.js';\nconsole.log(two);\n");
    writeFileSync(join(dir, 'src', 'lib', 'two.ts'), 'export const two: number = 2;\n');
  });

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('builds every file, writes the build-info file and makes dist/cli.js executable', () => {
    const run = build();
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(existsSync(join(dir, 'dist', 'lib', 'two.js'))).toBe(true);
    expect(existsSync(join(dir, 'dist', '.tsbuildinfo'))).toBe(true);
    expect(statSync(join(dir, 'dist', 'cli.js')).mode & 0o111).toBe(0o111);
  });

  it('builds an output again after it was deleted by hand, though no source changed', () => {
    rmSync(join(dir, 'dist', 'lib', 'two.js'));
    const run = build();
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(existsSync(join(dir, 'dist', 'lib', 'two.js'))).toBe(true);
  });

  it('removes the outputs (and emptied folders) of a source that was moved away', () => {
    mkdirSync(join(dir, 'src', 'old'));
    writeFileSync(join(dir, 'src', 'old', 'three.ts'), 'export const three: number = 3;\n');
    expect(build().status).toBe(0);
    expect(existsSync(join(dir, 'dist', 'old', 'three.js'))).toBe(true);
    rmSync(join(dir, 'src', 'old'), { recursive: true });
    const run = build();
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(existsSync(join(dir, 'dist', 'old'))).toBe(false);
    expect(existsSync(join(dir, 'dist', 'lib', 'two.js'))).toBe(true);
    expect(existsSync(join(dir, 'dist', 'cli.js'))).toBe(true);
  });

  it('fails with the exit code and message of tsc on a type error', () => {
    writeFileSync(join(dir, 'src', 'lib', 'two.ts'), 'export const two: number = "2";\n');
    const run = build();
    expect(run.status).not.toBe(0);
    expect(run.stdout + run.stderr).toContain("Type 'string' is not assignable to type 'number'");
  });
});
