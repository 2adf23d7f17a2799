import { createHash } from 'node:crypto';
import { type FSWatcher, readFileSync, watch } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { NotTextError, readTextFile } from '../base/decode-text.js';
import { type BusinessesDirListing, readBusinessesDir, resolveBusinessesDir } from './businesses-dir.js';
import { ConfigError } from './config-error.js';
import type { Env } from './interpolate-env.js';
import { type LoadedConfig, parseConfigText } from './load-config.js';
import { readShadowFile, type ShadowFileRead } from './load-shadow-rules.js';
import { readConfigSource } from './read-config-source.js';

export interface WatchLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface WatchConfigOptions {
  env?: Env;
  /** A valid new config: swap it in. */
  onReload(loaded: LoadedConfig): void;
  /** The file changed but is invalid (or unreadable): the old config stays in force. */
  onError(error: ConfigError): void;
  logger?: WatchLogger;
  /** Wait this long after the last change event before reading (editors write in bursts). */
  debounceMs?: number;
  /** Reload on SIGHUP too (default true). */
  sighup?: boolean;
  /** The shadow rules files of the config loaded at start (LoadedConfig.shadowFiles): watched too. */
  shadowFiles?: readonly string[];
}

export interface ConfigWatcher {
  /** Stops watching; safe to call more than once. */
  close(): void;
}

/** The shadow rules files read for one load, by resolved path. */
type ShadowReads = ReadonlyMap<string, ShadowFileRead>;

/**
 * What was read: the config text, with businesses_dir every business file, and every shadow rules
 * file; hashed to spot no-op saves.
 */
function hashOf(text: string, listing: BusinessesDirListing | undefined, shadow: ShadowReads): string {
  const hash = createHash('sha256').update(text);
  if (listing?.ok) {
    for (const file of listing.files) hash.update(`\u0000${file.name}\u0000${file.text}`);
  } else if (listing) {
    hash.update(`\u0000unreadable ${listing.code} ${listing.file ?? ''}`);
  }
  for (const [path, read] of [...shadow].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    hash.update(`\u0001${path}\u0000${read.ok ? read.text : `unreadable ${read.code}`}`);
  }
  return hash.digest('hex');
}

/** Reads these shadow rules files now. */
function readShadowFiles(files: readonly string[]): Map<string, ShadowFileRead> {
  return new Map(files.map((file) => [file, readShadowFile(file)]));
}

/**
 * Watches a set of files (the shadow rules files of the config last read) through their
 * directories, as the config itself is watched (editors replace files by renaming).
 */
interface FilesWatch {
  readonly files: readonly string[];
  watch(files: readonly string[]): void;
  close(): void;
}

function createFilesWatch(onChange: () => void, logger: WatchLogger | undefined): FilesWatch {
  let files: readonly string[] = [];
  const watchers = new Map<string, FSWatcher>();
  let closed = false;
  return {
    get files() {
      return files;
    },
    watch(next) {
      if (closed) return;
      files = [...next];
      const byDir = new Map<string, Set<string>>();
      for (const file of files) {
        const names = byDir.get(dirname(file)) ?? new Set<string>();
        names.add(basename(file));
        byDir.set(dirname(file), names);
      }
      for (const [dir, watcher] of watchers) {
        if (byDir.has(dir)) continue;
        watcher.close();
        watchers.delete(dir);
      }
      for (const dir of byDir.keys()) {
        if (watchers.has(dir)) continue;
        try {
          const watcher = watch(dir, { persistent: false }, (_event, changed) => {
            const names = byDir.get(dir);
            if (changed === null || names === undefined || names.has(changed.toString())) onChange();
          });
          watcher.on('error', (error) => {
            logger?.warn({ dir, error: String(error) }, 'shadow rules watch failed; SIGHUP still reloads');
          });
          watchers.set(dir, watcher);
        } catch (error) {
          logger?.warn(
            { dir, error: String(error) },
            'cannot watch the shadow rules file; SIGHUP still reloads',
          );
        }
      }
    },
    close() {
      closed = true;
      for (const watcher of watchers.values()) watcher.close();
      watchers.clear();
    },
  };
}

/**
 * The businesses_dir a config names, read without validating it (at start, to know what to
 * watch). A config that cannot be read this far has none to watch until it is fixed.
 */
function businessesDirOf(text: string, path: string, env: Env): string | undefined {
  if (!text.includes('businesses_dir')) return undefined;
  try {
    const { value } = readConfigSource(text, path, { env, allowMissing: true });
    const setting = (value as Record<string, unknown>).businesses_dir;
    return typeof setting === 'string' && setting.trim() !== ''
      ? resolveBusinessesDir(path, setting)
      : undefined;
  } catch {
    return undefined;
  }
}

/** A watch on the businesses_dir of the config last read, moved when the config names another. */
interface DirWatch {
  readonly dir: string | undefined;
  watch(dir: string | undefined): void;
  close(): void;
}

function createDirWatch(onChange: () => void, logger: WatchLogger | undefined): DirWatch {
  let current: string | undefined;
  let watcher: FSWatcher | undefined;
  let closed = false;
  return {
    get dir() {
      return current;
    },
    watch(dir) {
      if (closed || (dir === current && (watcher !== undefined || dir === undefined))) return;
      watcher?.close();
      watcher = undefined;
      current = dir;
      if (dir === undefined) return;
      try {
        // Any name: Kubernetes swaps a ConfigMap's files through a hidden `..data` link.
        watcher = watch(dir, { persistent: false }, onChange);
        watcher.on('error', (error) => {
          logger?.warn({ dir, error: String(error) }, 'businesses_dir watch failed; SIGHUP still reloads');
        });
      } catch (error) {
        logger?.warn({ dir, error: String(error) }, 'cannot watch businesses_dir; SIGHUP still reloads');
      }
    },
    close() {
      closed = true;
      watcher?.close();
      watcher = undefined;
    },
  };
}

/** The config's text, or undefined (and onError) when it cannot be read. */
async function readConfigText(
  file: string,
  path: string,
  options: WatchConfigOptions,
): Promise<string | undefined> {
  try {
    return await readTextFile(file);
  } catch (error) {
    if (error instanceof NotTextError) {
      const { line, column, detail } = error;
      const message = `${detail}; keeping the old config`;
      options.onError(new ConfigError([{ file: path, line, column, path: '', message }], { cause: error }));
      return undefined;
    }
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
    // Mid-replace the file can be missing for a moment; the rename that follows fires again.
    if (code === 'ENOENT') return undefined;
    options.onError(
      new ConfigError(
        [
          {
            file: path,
            line: 1,
            column: 1,
            path: '',
            message: `cannot read the config (${code}); keeping the old one`,
          },
        ],
        { cause: error },
      ),
    );
    return undefined;
  }
}

/**
 * Loads the config again unless nothing it reads changed since `lastHash`; returns the hash of what
 * it read (the config text, its businesses_dir files and its shadow rules files), the
 * businesses_dir it named and the shadow rules files it read.
 */
function reloadIfChanged(
  text: string,
  reason: string,
  state: {
    readonly lastHash: string | undefined;
    readonly dir: string | undefined;
    readonly shadowFiles: readonly string[];
  },
  path: string,
  options: WatchConfigOptions & { env: Env },
): { hash: string; dir: string | undefined; shadowFiles: readonly string[] } {
  // The listing hashed is the one parsed: a file changed in between is the next change event's.
  const known = state.dir;
  const listing = known === undefined ? undefined : readBusinessesDir(known);
  const knownShadow = readShadowFiles(state.shadowFiles);
  const hash = hashOf(text, listing, knownShadow);
  if (hash === state.lastHash) {
    // Said, so that an operator's SIGHUP after a save that changed nothing is not met with silence.
    options.logger?.info({ file: path, reason }, 'config unchanged; nothing reloaded');
    return { hash, dir: known, shadowFiles: state.shadowFiles };
  }
  // The shadow rules files this load reads, each once (the ones read above as they were read).
  const shadowRead = new Map<string, ShadowFileRead>();
  const readShadow = (file: string): ShadowFileRead => {
    const read = shadowRead.get(file) ?? knownShadow.get(file) ?? readShadowFile(file);
    shadowRead.set(file, read);
    return read;
  };
  let readDir: string | undefined;
  let read: BusinessesDirListing | undefined;
  const readBusinesses = (dir: string) => {
    readDir = dir;
    read = dir === known && listing ? listing : readBusinessesDir(dir);
    return read;
  };
  let outcome: { loaded: LoadedConfig } | { error: ConfigError };
  try {
    outcome = {
      loaded: parseConfigText(text, {
        fileName: path,
        env: options.env,
        readBusinessesDir: readBusinesses,
        readShadowFile: readShadow,
      }),
    };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    outcome = { error };
  }
  const result = {
    hash: hashOf(text, readDir === known ? listing : read, shadowRead),
    dir: readDir,
    shadowFiles: [...shadowRead.keys()],
  };
  if ('loaded' in outcome) {
    const { loaded } = outcome;
    options.logger?.info(
      { file: path, reason, rules: loaded.config.rules.length, businesses: loaded.businesses.length },
      'config reloaded',
    );
    options.onReload(loaded);
  } else {
    options.logger?.warn(
      { file: path, reason, problems: outcome.error.issues.length },
      'config change rejected; keeping the old one',
    );
    options.onError(outcome.error);
  }
  return result;
}

/**
 * Hot reload. Watches the directory, not the file: editors and `kubectl` replace a file by
 * renaming a new one over it, which ends a watch on the old inode. With businesses_dir, watches
 * that directory too: a business file added, changed or removed reloads like the config does,
 * and so does a change of a shadow rules file (`shadow.rules`) the config last read.
 * A change (or SIGHUP) is debounced, then the config is validated again; only a valid one
 * reaches `onReload`, and one whose files are all unchanged is ignored.
 */
export function watchConfig(path: string, options: WatchConfigOptions): ConfigWatcher {
  const file = resolve(path);
  const name = basename(file);
  const debounceMs = options.debounceMs ?? 150;
  const withEnv = { ...options, env: options.env ?? process.env };
  let lastHash: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  let running = false;
  let again = false;

  const schedule = (reason: string) => {
    if (closed) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      void check(reason);
    }, debounceMs);
  };
  const businessesDir = createDirWatch(() => schedule('businesses_dir changed'), options.logger);
  const shadowFiles = createFilesWatch(() => schedule('shadow rules changed'), options.logger);

  const check = async (reason: string) => {
    if (closed) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      const text = await readConfigText(file, path, options);
      if (text === undefined || closed) return;
      const state = { lastHash, dir: businessesDir.dir, shadowFiles: shadowFiles.files };
      const read = reloadIfChanged(text, reason, state, path, withEnv);
      lastHash = read.hash;
      businessesDir.watch(read.dir);
      shadowFiles.watch(read.shadowFiles);
    } finally {
      running = false;
      if (again && !closed) {
        again = false;
        schedule('change during reload');
      }
    }
  };

  // Remember what is loaded now so that a no-op save does not trigger a reload. Read at once
  // (not async) so that a change made right after this call is not mistaken for the start state.
  try {
    const text = readFileSync(file, 'utf8');
    const dir = businessesDirOf(text, path, withEnv.env);
    const shadow = options.shadowFiles ?? [];
    lastHash = hashOf(text, dir === undefined ? undefined : readBusinessesDir(dir), readShadowFiles(shadow));
    businessesDir.watch(dir);
    shadowFiles.watch(shadow);
  } catch {
    lastHash = undefined;
  }

  let watcher: FSWatcher | undefined = watch(dirname(file), { persistent: false }, (_event, changed) => {
    if (changed === null || changed.toString() === name) schedule('file changed');
  });
  watcher.on('error', (error) => {
    options.logger?.warn({ file: path, error: String(error) }, 'config watch failed; SIGHUP still reloads');
  });
  const onHup = () => schedule('SIGHUP');
  if (options.sighup ?? true) process.on('SIGHUP', onHup);

  return {
    close() {
      if (closed) return;
      closed = true;
      if (timer) clearTimeout(timer);
      watcher?.close();
      watcher = undefined;
      businessesDir.close();
      shadowFiles.close();
      process.off('SIGHUP', onHup);
    },
  };
}
