import type { z } from 'zod';
import { closestNameHint } from '../base/closest-name.js';
import { type ConfigDocument, type ConfigPath, locatePath } from '../config/config-document.js';
import {
  ActionMatcherSchema,
  ExpectSchema,
  RuleTestCaseSchema,
  RuleTestFileSchema,
} from './rules-test-schema.js';

const FILE_KEYS = Object.keys(RuleTestFileSchema.shape);
const CASE_KEYS = Object.keys(RuleTestCaseSchema.shape);
const EXPECT_KEYS = Object.keys(ExpectSchema.shape);
const MATCHER_KEYS = Object.keys(ActionMatcherSchema.options[1].shape);

/** The keys a test file allows at `path` (its top level, a case, an expect, an action matcher). */
function allowedKeysAt(path: ConfigPath): readonly string[] {
  if (path.length === 0) return FILE_KEYS;
  if (path.length === 2 && path[0] === 'cases') return CASE_KEYS;
  if (path.length === 3 && path[2] === 'expect') return EXPECT_KEYS;
  if (path.length === 5 && path[2] === 'expect') return MATCHER_KEYS;
  return [];
}

/**
 * Schema problems of a test file as `file:line:column: path: what`: an unknown key is
 * reported at the key, with the closest allowed one; a missing required field says it is missing.
 */
export function describeTestFileIssues(
  issues: readonly z.core.$ZodIssue[],
  document: ConfigDocument,
  file: string,
): string[] {
  const lines: string[] = [];
  for (const issue of issues) {
    const path = issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p));
    const label = path.length > 0 ? `${path.join('.')}: ` : '';
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        const at = locatePath(document, [...path, key], { atKey: true });
        const hint = closestNameHint(key, allowedKeysAt(path));
        lines.push(`${file}:${at.line}:${at.column}: ${label}unknown key "${key}"${hint}`);
      }
      continue;
    }
    const at = locatePath(document, path);
    const missing = issue.code === 'invalid_type' && issue.input === undefined;
    lines.push(`${file}:${at.line}:${at.column}: ${label}${missing ? 'missing' : issue.message}`);
  }
  return lines;
}
