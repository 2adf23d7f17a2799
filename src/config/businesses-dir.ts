import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { decodeText } from '../base/decode-text.js';

/** One file of a businesses_dir: one business. */
export interface BusinessFile {
  /** The file name (`toko-a.yaml`); its stem is the business id when the file has no `id:`. */
  readonly name: string;
  /** The path messages show: the config's directory joined with businesses_dir and the name. */
  readonly path: string;
  readonly text: string;
  /** Where the file stops being UTF-8 text (then `text` is empty), see decode-text.ts. */
  readonly notText?: { line: number; column: number; message: string };
}

export type BusinessesDirListing =
  | { readonly ok: true; readonly dir: string; readonly files: readonly BusinessFile[] }
  /** The directory (or one of its files) could not be read; `file` names the file when it was one. */
  | { readonly ok: false; readonly dir: string; readonly code: string; readonly file?: string };

/** Reads a businesses_dir (LoadOptions lets hot reload see what was read). */
export type ReadBusinessesDir = (dir: string) => BusinessesDirListing;

/** `*.yaml` and `*.yml`, not hidden: editors' swap files and Kubernetes' `..data` links start with a dot. */
export const BUSINESS_FILE_NAME = /^[^.].*\.ya?ml$/;

/** The id a file gives its business when it does not write one: its name without `.yaml`/`.yml`. */
export function fileStem(name: string): string {
  return name.replace(/\.ya?ml$/, '');
}

/** businesses_dir as written, relative to the config file's directory unless absolute. */
export function resolveBusinessesDir(configFile: string, setting: string): string {
  return isAbsolute(setting) ? setting : join(dirname(configFile), setting);
}

/**
 * Every business file of `dir`, by name (code-point order, the same on every machine). Files are
 * followed through symbolic links: a Kubernetes ConfigMap mounts each key as a link.
 */
export function readBusinessesDir(dir: string): BusinessesDirListing {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    return { ok: false, dir, code: (error as NodeJS.ErrnoException).code ?? 'unknown error' };
  }
  const files: BusinessFile[] = [];
  for (const name of names.filter((n) => BUSINESS_FILE_NAME.test(n)).sort(byCodePoint)) {
    const path = join(dir, name);
    try {
      if (!statSync(path).isFile()) continue;
      const decoded = decodeText(readFileSync(path));
      files.push(
        decoded.ok ? { name, path, text: decoded.text } : { name, path, text: '', notText: decoded },
      );
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
      // Removed between the listing and the read: it is gone, as the next change event will say.
      if (code === 'ENOENT') continue;
      return { ok: false, dir, code, file: path };
    }
  }
  return { ok: true, dir, files };
}

function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
