import { createHash } from 'node:crypto';
import { type FSWatcher, readFileSync, watch } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { ConfigError } from './config-error.js';
import type { Env } from './interpolate-env.js';
import { type LoadedConfig, parseConfigText } from './load-config.js';

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
}

export interface ConfigWatcher {
  /** Stops watching; safe to call more than once. */
  close(): void;
}

/**
 * Hot reload. Watches the directory, not the file: editors and `kubectl` replace a file by
 * renaming a new one over it, which ends a watch on the old inode. A change (or SIGHUP) is
 * debounced, then the file is validated again; only a valid file reaches `onReload`, and an
 * unchanged one is ignored.
 */
export function watchConfig(path: string, options: WatchConfigOptions): ConfigWatcher {
  const file = resolve(path);
  const name = basename(file);
  const debounceMs = options.debounceMs ?? 150;
  let lastHash: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  let running = false;
  let again = false;

  const check = async (reason: string) => {
    if (closed) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
        // Mid-replace the file can be missing for a moment; the rename that follows fires again.
        if (code === 'ENOENT') return;
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
        return;
      }
      const hash = createHash('sha256').update(text).digest('hex');
      if (hash === lastHash || closed) return;
      try {
        const loaded = parseConfigText(text, {
          fileName: path,
          ...(options.env ? { env: options.env } : {}),
        });
        lastHash = hash;
        options.logger?.info({ file: path, reason, rules: loaded.config.rules.length }, 'config reloaded');
        options.onReload(loaded);
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        lastHash = hash;
        options.logger?.warn(
          { file: path, reason, problems: error.issues.length },
          'config change rejected; keeping the old one',
        );
        options.onError(error);
      }
    } finally {
      running = false;
      if (again && !closed) {
        again = false;
        schedule('change during reload');
      }
    }
  };

  const schedule = (reason: string) => {
    if (closed) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      void check(reason);
    }, debounceMs);
  };

  // Remember what is loaded now so that a no-op save does not trigger a reload. Read at once
  // (not async) so that a change made right after this call is not mistaken for the start state.
  try {
    lastHash = createHash('sha256').update(readFileSync(file, 'utf8')).digest('hex');
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
      process.off('SIGHUP', onHup);
    },
  };
}
