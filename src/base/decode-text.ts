import { readFile } from 'node:fs/promises';
import { ConvoBridgeError } from './errors.js';

/**
 * Text files the CLI and the config loader read (YAML, JSON, JSON Lines) are UTF-8. Reading them
 * with `readFile(path, 'utf8')` turned bytes that are not UTF-8 into U+FFFD without a word, kept a
 * byte-order mark as an invisible first character (JSON.parse: "Unexpected token '﻿'") and read a
 * binary file as one odd scalar. `decodeText` says where the first such byte is instead.
 */

export type DecodedText =
  | { ok: true; text: string }
  | { ok: false; line: number; column: number; message: string };

const BOM = [0xef, 0xbb, 0xbf] as const;
const STRICT = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The text of UTF-8 `bytes`, a leading BOM dropped; or the line:column of the first byte that is not text. */
export function decodeText(bytes: Uint8Array): DecodedText {
  const start = bytes[0] === BOM[0] && bytes[1] === BOM[1] && bytes[2] === BOM[2] ? 3 : 0;
  // The common case at native speed; the byte-by-byte walk only finds where a bad file goes wrong.
  try {
    const text = STRICT.decode(bytes.subarray(start));
    if (!text.includes('\0')) return { ok: true, text };
  } catch {
    // Not UTF-8: found below.
  }
  const bad = firstBadByte(bytes, start) ?? { offset: start, kind: 'utf8' as const };
  const { line, column } = positionOf(bytes, start, bad.offset);
  const byte = `0x${(bytes[bad.offset] ?? 0).toString(16).toUpperCase().padStart(2, '0')}`;
  const message =
    bad.kind === 'nul'
      ? 'a NUL byte: this is a binary file, not text'
      : `byte ${byte} is not UTF-8: save the file as UTF-8 (no other encoding is read)`;
  return { ok: false, line, column, message };
}

/** Length of the UTF-8 sequence a lead byte starts, and the allowed range of its second byte. */
function sequence(lead: number): { length: number; min: number; max: number } | undefined {
  if (lead >= 0xc2 && lead <= 0xdf) return { length: 2, min: 0x80, max: 0xbf };
  if (lead === 0xe0) return { length: 3, min: 0xa0, max: 0xbf };
  if (lead === 0xed) return { length: 3, min: 0x80, max: 0x9f };
  if (lead >= 0xe1 && lead <= 0xef) return { length: 3, min: 0x80, max: 0xbf };
  if (lead === 0xf0) return { length: 4, min: 0x90, max: 0xbf };
  if (lead >= 0xf1 && lead <= 0xf3) return { length: 4, min: 0x80, max: 0xbf };
  if (lead === 0xf4) return { length: 4, min: 0x80, max: 0x8f };
  return undefined;
}

/** The first NUL or ill-formed sequence (Unicode table 3-7), or undefined when all is text. */
function firstBadByte(
  bytes: Uint8Array,
  start: number,
): { offset: number; kind: 'nul' | 'utf8' } | undefined {
  let i = start;
  while (i < bytes.length) {
    const lead = bytes[i] ?? 0;
    if (lead === 0) return { offset: i, kind: 'nul' };
    if (lead < 0x80) {
      i += 1;
      continue;
    }
    const seq = sequence(lead);
    if (seq === undefined) return { offset: i, kind: 'utf8' };
    for (let k = 1; k < seq.length; k++) {
      const next = bytes[i + k];
      const [min, max] = k === 1 ? [seq.min, seq.max] : [0x80, 0xbf];
      if (next === undefined || next < min || next > max) return { offset: i, kind: 'utf8' };
    }
    i += seq.length;
  }
  return undefined;
}

/** Line and column (in characters, 1-based) of byte `offset`. */
function positionOf(bytes: Uint8Array, start: number, offset: number): { line: number; column: number } {
  let line = 1;
  let column = 1;
  for (let i = start; i < offset; i++) {
    const byte = bytes[i] ?? 0;
    if (byte === 0x0a) {
      line += 1;
      column = 1;
    } else if ((byte & 0xc0) !== 0x80) {
      column += 1;
    }
  }
  return { line, column };
}

/** A file that is not UTF-8 text; the message is `file:line:column: what`. */
export class NotTextError extends ConvoBridgeError {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  /** The problem without the place. */
  readonly detail: string;

  constructor(file: string, where: { line: number; column: number; message: string }) {
    super(`${file}:${where.line}:${where.column}: ${where.message}`, { code: 'NOT_TEXT' });
    this.file = file;
    this.line = where.line;
    this.column = where.column;
    this.detail = where.message;
  }
}

/**
 * A UTF-8 text file (a leading BOM dropped). Throws what readFile throws when the file cannot be
 * read, and NotTextError when it is not text.
 */
export async function readTextFile(path: string): Promise<string> {
  const decoded = decodeText(await readFile(path));
  if (!decoded.ok) throw new NotTextError(path, decoded);
  return decoded.text;
}
