import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';

/**
 * The previous release of convo-bridge, materialised from git and built, so that a test can let it
 * write a running bridge's data into Redis and then start this checkout's code on that data.
 *
 * Where it lives: `node_modules/.cache/convo-bridge-upgrade/<commit>/` of this checkout, the commit's
 * files as `git archive` gives them plus the `dist/` that `node scripts/build.mjs` made. The tree is
 * built once per machine and commit; deleting node_modules (a fresh install) deletes it with the
 * modules it was built against.
 *
 * Which modules it runs on: when the previous release's lockfile pins the same versions of every
 * package it ships with (and of TypeScript, which builds it) as this checkout's lockfile, it uses
 * this checkout's node_modules. Sharing them is sound then: those are the very packages the
 * previous release was installed with, so the data it writes (BullMQ's keys included) is the data
 * that release writes in production. No node_modules symlink is made: the tree sits inside this
 * checkout's node_modules, and Node (and tsc) resolving a package from it walk up to this
 * checkout's node_modules by themselves; a link from node_modules back to itself would be a cycle
 * that tree walkers loop in.
 * When the versions differ (a dependency was bumped since), the tree gets its own node_modules
 * from its own lockfile (`npm install --prefer-offline`: npm's cache serves what it holds, the
 * registry the rest), found first by the same resolution. Running the old code on newer packages
 * would test a release that never existed (a BullMQ bump may change its own keys), and failing
 * instead would block every dependency bump until the next release moves the commit forward.
 */

/** The file that names the previous release (one place; see its comment for moving it forward). */
export const PREVIOUS_RELEASE_FILE = join('test', 'integration', 'upgrade', 'previous-release.txt');

const CACHE_DIR = join('node_modules', '.cache', 'convo-bridge-upgrade');
/** Written last into a finished tree: a tree without it is an interrupted build, never used. */
const BUILT_MARKER = '.upgrade-build.json';
const BUILD_TIMEOUT_MS = 10 * 60_000;
const INSTALL_TIMEOUT_MS = 10 * 60_000;

export interface PreviousRelease {
  readonly commit: string;
  /** The built tree. */
  readonly dir: string;
  /** Its `dist/cli.js`, to run with `node`. */
  readonly cli: string;
  /** Whose node_modules it runs on. */
  readonly modules: 'checkout' | 'own';
  /** Whether this call built it (false: taken from the cache). */
  readonly built: boolean;
}

/** The commit id the file names: its one line that is neither blank nor a `#` comment. */
export function parsePreviousReleaseFile(text: string, file = PREVIOUS_RELEASE_FILE): string {
  const lines = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const [commit] = lines;
  if (lines.length !== 1 || commit === undefined || !/^[0-9a-f]{40}$/.test(commit)) {
    throw new Error(
      `${file} must hold exactly one full commit id (40 lowercase hex digits) besides # comments, found ${JSON.stringify(lines)}: put \`git rev-parse <release tag>^{commit}\` there`,
    );
  }
  return commit;
}

const LockEntrySchema = z.looseObject({
  version: z.string().optional(),
  dev: z.boolean().optional(),
  link: z.boolean().optional(),
});
const LockfileSchema = z.looseObject({ packages: z.record(z.string(), LockEntrySchema) });

/** Packages the build needs besides those the release ships with. */
const BUILD_PACKAGES = new Set(['node_modules/typescript']);

/**
 * Where the previous release's lockfile and this checkout's disagree about a package the previous
 * release runs on (every entry not marked `dev`) or builds with (TypeScript): one line per package,
 * empty when this checkout's node_modules can run it as it was released.
 */
export function dependencyDrift(previousLock: unknown, currentLock: unknown): string[] {
  const packagesOf = (lock: unknown, whose: string) => {
    const parsed = LockfileSchema.safeParse(lock);
    if (!parsed.success) {
      throw new Error(
        `${whose} package-lock.json has no \`packages\` map of npm's lockfile v2/v3 (${parsed.error.issues[0]?.message}): regenerate it with \`npm install\``,
        { cause: parsed.error },
      );
    }
    return parsed.data.packages;
  };
  const previous = packagesOf(previousLock, "the previous release's");
  const current = packagesOf(currentLock, "this checkout's");
  const drift: string[] = [];
  for (const [path, entry] of Object.entries(previous)) {
    if (path === '' || entry.link === true) continue;
    if (entry.dev === true && !BUILD_PACKAGES.has(path)) continue;
    const here = current[path];
    const name = path.replace(/^(.*\/)?node_modules\//, '');
    if (here === undefined) drift.push(`${name} (${path}): ${entry.version} there, absent here`);
    else if (here.version !== entry.version) {
      drift.push(`${name} (${path}): ${entry.version} there, ${here.version} here`);
    }
  }
  return drift;
}

interface Run {
  code: number | null;
  output: string;
}

/** Runs a command without blocking the test process's event loop; kills it at the deadline. */
function run(command: string, args: readonly string[], cwd: string, timeoutMs: number): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(command, [...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const deadline = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (error) => {
      clearTimeout(deadline);
      resolve({ code: null, output: `${output}${String(error)}` });
    });
    child.once('close', (code) => {
      clearTimeout(deadline);
      resolve({ code, output });
    });
  });
}

const tail = (text: string, lines = 30) => text.trim().split('\n').slice(-lines).join('\n');

/** Fails, saying how to fetch it, when the commit is not in this clone (a shallow one, say). */
async function ensureCommit(root: string, commit: string): Promise<void> {
  const found = await run('git', ['cat-file', '-e', `${commit}^{commit}`], root, 30_000);
  if (found.code === 0) return;
  const shallow = await run('git', ['rev-parse', '--is-shallow-repository'], root, 30_000);
  const how =
    shallow.output.trim() === 'true'
      ? 'this is a shallow clone: fetch the history with `git fetch --unshallow` (in CI: check out with fetch-depth: 0)'
      : `fetch it with \`git fetch origin ${commit}\``;
  throw new Error(
    `the upgrade test starts from the previous release, commit ${commit} (named in ${PREVIOUS_RELEASE_FILE}), which is not in this clone at ${root}: ${how}, then run the test again${found.output.trim() === '' ? '' : ` (git said: ${tail(found.output, 3)})`}`,
  );
}

/** The commit's files in `dir`: `git archive <commit> | tar -x -C <dir>`, through a file. */
async function extract(root: string, commit: string, dir: string): Promise<void> {
  const archive = `${dir}.tar`;
  try {
    const archived = await run('git', ['archive', '--format=tar', '-o', archive, commit], root, 120_000);
    if (archived.code !== 0) {
      throw new Error(`git archive ${commit} failed in ${root}: ${tail(archived.output)}`);
    }
    const unpacked = await run('tar', ['-x', '-f', archive, '-C', dir], root, 120_000);
    if (unpacked.code !== 0) throw new Error(`tar could not unpack ${archive}: ${tail(unpacked.output)}`);
  } finally {
    await rm(archive, { force: true });
  }
}

/** Gives the tree its own node_modules from its own lockfile (see the module comment for why). */
async function installOwnModules(dir: string, commit: string, drift: readonly string[]): Promise<void> {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  // `npm install` rather than `npm ci`: it installs the lockfile's versions too, and this npm's
  // `npm ci` refuses lockfiles written without other platforms' optional packages (see .ci/run).
  // No scripts: the build below is run explicitly, and nothing the release needs compiles natively.
  const installed = await run(
    npm,
    ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--prefer-offline'],
    dir,
    INSTALL_TIMEOUT_MS,
  );
  if (installed.code !== 0) {
    throw new Error(
      `the previous release (commit ${commit}) pins other versions than this checkout (${drift.slice(0, 5).join('; ')}${drift.length > 5 ? `; ${drift.length - 5} more` : ''}), and installing its own failed in ${dir}: ${tail(installed.output)}\nGive npm access to its registry (or a cache holding those versions) and run the test again.`,
    );
  }
}

async function readJson(file: string): Promise<unknown> {
  return JSON.parse(await readFile(file, 'utf8'));
}

/**
 * The previous release named in PREVIOUS_RELEASE_FILE, built: from the cache when a finished tree
 * is there, else extracted from git, given its modules, built and put in the cache (the first run
 * on a machine pays for tsc; later runs pay nothing).
 */
export async function previousRelease(root = process.cwd()): Promise<PreviousRelease> {
  const commit = parsePreviousReleaseFile(await readFile(join(root, PREVIOUS_RELEASE_FILE), 'utf8'));
  const cache = join(root, CACHE_DIR);
  const dir = join(cache, commit);
  const cli = join(dir, 'dist', 'cli.js');
  const cached = async (built: boolean): Promise<PreviousRelease> => {
    const marker = z
      .object({ modules: z.enum(['checkout', 'own']) })
      .parse(await readJson(join(dir, BUILT_MARKER)));
    return { commit, dir, cli, modules: marker.modules, built };
  };
  if (existsSync(join(dir, BUILT_MARKER))) return cached(false);
  if (!existsSync(join(root, 'node_modules'))) {
    throw new Error(`no node_modules in ${root}: run \`npm install\` there first`);
  }

  await ensureCommit(root, commit);
  await mkdir(cache, { recursive: true });
  // Built beside its final place and renamed when finished: an interrupted build leaves a stray
  // folder, never a half tree under the commit's name.
  const work = await mkdtemp(join(cache, `${commit}.building-`));
  try {
    await extract(root, commit, work);
    const drift = dependencyDrift(
      await readJson(join(work, 'package-lock.json')),
      await readJson(join(root, 'package-lock.json')),
    );
    if (drift.length > 0) await installOwnModules(work, commit, drift);
    const build = await run(process.execPath, ['scripts/build.mjs'], work, BUILD_TIMEOUT_MS);
    if (build.code !== 0 || !existsSync(join(work, 'dist', 'cli.js'))) {
      throw new Error(
        `the previous release (commit ${commit}) did not build in ${work} with ${drift.length === 0 ? "this checkout's node_modules" : 'its own node_modules'}: ${tail(build.output)}`,
      );
    }
    const modules = drift.length === 0 ? 'checkout' : 'own';
    await writeFile(
      join(work, BUILT_MARKER),
      `${JSON.stringify({ commit, modules, drift, builtAt: new Date().toISOString() }, null, 2)}\n`,
    );
    if (existsSync(join(dir, BUILT_MARKER))) {
      // Another test process finished the same build meanwhile: keep its tree.
      await rm(work, { recursive: true, force: true });
      return cached(false);
    }
    await rm(dir, { recursive: true, force: true }); // a tree without the marker: never finished
    await rename(work, dir);
  } catch (error) {
    await rm(work, { recursive: true, force: true });
    // Another test process may have finished the same build meanwhile: use its tree.
    if (existsSync(join(dir, BUILT_MARKER))) return cached(false);
    throw error;
  }
  return cached(true);
}

/** What a CLI run printed and returned. */
export interface CliRun {
  code: number;
  out: string;
  err: string;
}

/**
 * The previous release's own CLI, run in this process (its `runCli(argv, io)`, as this checkout's
 * tests call theirs): how that release reads the data it left, without the seconds a process
 * start costs on a busy machine.
 */
export async function previousCli(release: PreviousRelease): Promise<(argv: string[]) => Promise<CliRun>> {
  const file = join(release.dir, 'dist', 'cli', 'run-cli.js');
  const module: unknown = await import(pathToFileURL(file).href);
  const parsed = z
    .object({
      runCli: z.custom<(argv: string[], io: unknown) => Promise<number>>((v) => typeof v === 'function'),
    })
    .safeParse(module);
  if (!parsed.success) {
    throw new Error(
      `${file} of the previous release (commit ${release.commit}) exports no runCli(argv, io): adapt previousCli in test/support/previous-release.ts to how that release runs its CLI in process`,
    );
  }
  const { runCli } = parsed.data;
  return async (argv) => {
    let out = '';
    let err = '';
    const io = { stdout: (t: string) => (out += t), stderr: (t: string) => (err += t) };
    const code = await runCli(argv, io);
    return { code, out, err };
  };
}
